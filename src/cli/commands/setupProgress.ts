import type { PhaseEvent } from "../../python/index.js";
import { visibleControls } from "../../text/index.js";
import type { CliIO } from "../plumbing/command.js";
import { startProgress, type ProgressDone } from "../terminal/progress.js";

/** Lines of pip's own progress shown per phase when stderr is not a terminal (the rest left out, `--verbose` shows all). */
export const MAX_PIP_PROGRESS_LINES = 24;
/** Longest pip line shown, in characters (a long URL or a wheel name cut there). */
export const MAX_PIP_LINE_CHARS = 160;
/** The part of a pip output line kept while it is not yet ended by a newline, in bytes. */
const MAX_PARTIAL_LINE_BYTES = 4096;

/** pip's lines that say what it is doing now: one per distribution fetched, then what it installs. */
const PIP_PROGRESS = /^(Collecting|Downloading|Using cached|Processing|Building wheel|Installing collected packages|Successfully installed)\b/;

/** The phases that only look (a venv that is already set up): quiet when stderr is not a terminal. */
const QUIET_PHASES: ReadonlySet<PhaseEvent["phase"]> = new Set(["check"]);

/** Splits pip's output into lines and keeps the ones that say what it does, cut to MAX_PIP_LINE_CHARS. */
function pipLines(onLine: (line: string) => void): (chunk: Buffer) => void {
  let partial = "";
  return (chunk) => {
    const lines = (partial + chunk.toString("utf8")).split(/\r?\n|\r/);
    partial = lines.pop()!.slice(-MAX_PARTIAL_LINE_BYTES);
    for (const raw of lines) {
      const line = raw.trim();
      if (PIP_PROGRESS.test(line)) onLine(visibleControls(line.length > MAX_PIP_LINE_CHARS ? `${line.slice(0, MAX_PIP_LINE_CHARS - 1)}…` : line));
    }
  };
}

/**
 * What `albedo setup` shows while it works, on stderr. On a terminal: a ticker per phase carrying
 * pip's latest step ("Collecting numpy"), then one line per phase with its seconds. Piped (a log, or
 * npm running the install script): a line when each phase that changes the venv starts and ends,
 * and pip's steps under it, at most MAX_PIP_PROGRESS_LINES a phase. With --verbose, pip's own output.
 */
export function setupProgress(io: CliIO, verbose: boolean): { onPhase: (event: PhaseEvent) => void; onOutput: (chunk: Buffer) => void } {
  const tty = io.stderr.isTTY === true;
  const seconds = (ms = 0): string => `${(ms / 1000).toFixed(1)} s`;
  let ticker: ProgressDone | undefined;
  let current: PhaseEvent | undefined;
  let shown = 0;
  const onLine = pipLines((line) => {
    if (current === undefined) return;
    if (tty) ticker?.update(`albedo setup: ${current.description}: ${line}`);
    else if (shown < MAX_PIP_PROGRESS_LINES) io.stderr.write(`  pip: ${line}\n`);
    else if (shown === MAX_PIP_PROGRESS_LINES) io.stderr.write(`  pip: … (its further steps left out; albedo setup --verbose shows them all)\n`);
    shown += 1;
  });
  return {
    onPhase: (event) => {
      const quiet = !tty && !verbose && QUIET_PHASES.has(event.phase);
      if (event.state === "start") {
        current = event;
        shown = 0;
        if (quiet) return;
        if (tty && !verbose) ticker = startProgress(io.stderr, `albedo setup: ${event.description}`);
        else io.stderr.write(`albedo setup: ${event.description} ...\n`);
        return;
      }
      current = undefined;
      if (quiet) return;
      const line = `albedo setup: ${event.description} ... ${event.state === "done" ? "done" : "failed"} (${seconds(event.elapsedMs)})`;
      if (ticker !== undefined) ticker(line);
      else io.stderr.write(`${line}\n`);
      ticker = undefined;
    },
    onOutput: verbose ? (chunk) => void io.stderr.write(chunk) : onLine,
  };
}
