import type { RunResult } from "./process.js";

/** How many of pip's own ERROR lines a failure message quotes. */
export const MAX_QUOTED_PIP_LINES = 5;

export type PipFailureKind = "index_unreachable" | "timeout" | "pip_failed";

export interface PipFailure {
  readonly kind: PipFailureKind;
  readonly message: string;
  readonly fix: string;
}

// pip prints one of these when no index or link source gave it a usable candidate; with retries
// disabled it often prints only the "from versions: none" line, so both shapes count.
const UNREACHABLE = [
  /No matching distribution found/i,
  /Could not find a version that satisfies the requirement/i,
  /Failed to establish a new connection/i,
  /NewConnectionError|ConnectTimeoutError|ProxyError/,
  /Connection refused|Network is unreachable|No route to host/i,
  /Temporary failure in name resolution|Name or service not known/i,
  /Max retries exceeded|Could not fetch URL/i,
];

/** Explains a failed `pip install` from its exit status and output; `what` names the requirements being installed. */
export function classifyPipFailure(result: RunResult, what: string, timeoutMs: number): PipFailure {
  const output = `${result.stdout}\n${result.stderr}`;
  const quoted = pipErrorLines(output);
  if (result.timedOut) {
    return {
      kind: "timeout",
      message: `pip did not finish installing ${what} within PIP_INSTALL_TIMEOUT_MS=${timeoutMs} ms`,
      fix: "check the package index's speed (PIP_INDEX_URL) and run `albedo setup` again",
    };
  }
  if (UNREACHABLE.some((pattern) => pattern.test(output))) {
    return {
      kind: "index_unreachable",
      message: `pip could not download ${what}: no package index it tried was reachable, or none offers them${sources(output)}${quoted}`,
      fix:
        "make a package source reachable (PIP_INDEX_URL=<mirror>/simple, or PIP_FIND_LINKS=<dir of wheels> with PIP_NO_INDEX=1) and run `albedo setup` again; " +
        "or set ALBEDO_PYTHON to an interpreter that already has ipykernel>=7 and pyzmq",
    };
  }
  const status = result.spawnError ?? (result.code !== null ? `exit code ${result.code}` : `signal ${String(result.signal)}`);
  return {
    kind: "pip_failed",
    message: `pip failed to install ${what} (${status})${quoted || tail(output)}`,
    fix: "read pip's message above; `albedo setup --verbose` shows its full output",
  };
}

function pipErrorLines(output: string): string {
  const lines = output.split("\n").map((line) => line.trim()).filter((line) => line.startsWith("ERROR:"));
  return lines.length === 0 ? "" : `\n  pip said: ${lines.slice(0, MAX_QUOTED_PIP_LINES).join("\n            ")}`;
}

// pip names its sources first ("Looking in indexes: ...", "Looking in links: ..."); they tell the user what was tried.
function sources(output: string): string {
  const tried = [...output.matchAll(/^Looking in (indexes|links): (.+)$/gm)].map((m) => `${m[1]} ${m[2]!.trim()}`);
  return tried.length === 0 ? "" : ` (tried ${tried.join("; ")})`;
}

function tail(output: string): string {
  const lines = output.trim().split("\n").filter((line) => line.trim().length > 0).slice(-MAX_QUOTED_PIP_LINES);
  return lines.length === 0 ? "" : `\n  last output: ${lines.join("\n               ")}`;
}
