/**
 * The console's session, embedded (in-process) or held by a running daemon (D-5): one interface,
 * so the console reads the same whichever it got.
 */
import { BUILTIN_COMMANDS, completeSlash, describeResult, findCommand, unknownCommand } from "../commands/index.js";
import { findRunningDaemon, RemoteSession } from "../api/index.js";
import type { ExecuteOutput, InputHandler } from "../kernel/index.js";
import type { Session } from "../session/index.js";
import type { ParsedArgs } from "./args.js";
import type { CliIO } from "./command.js";
import { startProgress } from "./progress.js";
import { pageTexts } from "./render.js";
import { openEmbeddedSession, remoteOf } from "./session.js";
import { workspaceOf } from "./workspace.js";
import { stateDir } from "../platform/index.js";

/** How many skills a session has, and how many candidates it left out as invalid. */
export interface SkillSummary {
  readonly skills: number;
  readonly withErrors: number;
}

/** What a cell came to: the reply status, and the pages IPython answered `obj?` with. */
export interface CellResult {
  readonly status: string;
  readonly pages: readonly string[];
}

/** What the console needs from a session, embedded (in-process) or held by a running daemon (D-5). */
export interface ConsoleSession {
  readonly id: string;
  /** "embedded", or "daemon <url>". */
  readonly where: string;
  readonly summary: SkillSummary;
  /** What the kernel may reach, in one line (N-1): off, a policy of N hosts, open and unsafe. */
  readonly network: string;
  /** Slash names for completion, from the session's current command catalog. */
  commandNames(): readonly string[];
  /** Argument completions for a typed slash line (`/reload s` → `/reload session`), whole lines. */
  completeSlash(line: string): readonly string[];
  /** Runs a cell; outputs stream to `onOutput`. */
  execute(code: string, onOutput: (output: ExecuteOutput) => void, onInput?: InputHandler): Promise<CellResult>;
  /** Runs a typed slash command; returns the text to show. Throws with a message the console prints. */
  runSlash(name: string, text: string, columns: number): Promise<string>;
  /** Python completions for a line, or none. */
  completeCode(line: string): Promise<[string[], string]>;
  interrupt(): Promise<void>;
  close(): Promise<void>;
  /** Settles with the line to show when the session ended under the console (its daemon stopped); never for an embedded one. */
  readonly lost?: Promise<string>;
}

/** How long a Python completion may take before the console gives up on it. */
export const COMPLETION_TIMEOUT_MS = 1_000;

/** Why a typed skill command runs no model turn yet. */
const NO_MODEL_NOTE = "the console runs no model turn (`albedo chat` does); the instructions are available to Python via commands";

/** Skill directories with at least one error diagnostic: each is a skill the session left out. */
function invalidSkills(diagnostics: readonly { severity: string; path: string }[]): number {
  return new Set(diagnostics.filter((d) => d.severity === "error").map((d) => d.path)).size;
}

/** The console's view of an in-process Session. */
export function embeddedConsoleSession(session: Session): ConsoleSession {
  return {
    id: session.id,
    where: "embedded",
    get summary() {
      return { skills: session.view.snapshot.skills.length, withErrors: invalidSkills(session.view.discovered.diagnostics) };
    },
    get network() {
      return session.networkState().text;
    },
    commandNames: () => session.view.commands.commands.map((command) => command.name),
    completeSlash: (line) => completeSlash(session.view.commands.commands, line),
    async execute(code, onOutput, onInput) {
      const future = session.execute(code, onInput ? { onInput } : {});
      future.onOutput(onOutput);
      const reply = await future.done;
      return { status: reply.status, pages: pageTexts(reply) };
    },
    async runSlash(name, text, columns) {
      const command = session.prepare(name, text, "user");
      if (command === undefined) throw unknownCommand(name, session.view.commands.commands.map((c) => c.name));
      const result = await command.run();
      const shown = describeResult(findCommand(session.view.commands, command.command.name), result, columns);
      return command.command.submitsTurn ? `${shown}(${NO_MODEL_NOTE})\n` : shown;
    },
    async completeCode(line) {
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timeout")), COMPLETION_TIMEOUT_MS).unref());
      const reply = await Promise.race([session.kernel.complete(line, line.length), timeout]);
      if (reply.status !== "ok") return [[], line];
      const head = line.slice(0, reply.cursor_start);
      return [reply.matches.map((match) => head + match), line];
    },
    interrupt: () => session.interrupt(),
    close: () => session.close(),
  };
}

/** The console's view of a session held by a daemon; the daemon records typed commands as operations (C-6). */
export function remoteConsoleSession(remote: RemoteSession, url: string, withErrors: number): ConsoleSession {
  const declarations = () => remote.resource.commands.map((command) => ({ ...command, ...findCommand({ revision: "", commands: BUILTIN_COMMANDS }, command.name) }));
  return {
    id: remote.id,
    where: `daemon ${url}`,
    get summary() {
      return { skills: remote.resource.composition.extensions.skills.skills, withErrors };
    },
    get network() {
      return remote.resource.network.text;
    },
    commandNames: () => remote.resource.commands.map((command) => command.name),
    completeSlash: (line) => completeSlash(declarations(), line),
    execute: (code, onOutput) => remote.execute(code, (output) => onOutput({ header: { msg_type: output.msg_type }, content: output.content } as unknown as ExecuteOutput)),
    async runSlash(name, text, columns) {
      const outcome = await remote.command(name, text);
      if (outcome.kind === "failed") throw new Error(outcome.reason);
      if (outcome.kind === "result") return describeResult(findCommand({ revision: "", commands: BUILTIN_COMMANDS }, name), outcome.value, columns);
      return `submitted ${name} as turn ${outcome.turnId}: the daemon's model answers it (\`albedo chat\` shows the conversation)\n`;
    },
    completeCode: async (line) => [[], line],
    interrupt: () => remote.interrupt(),
    close: () => remote.close(),
    lost: remote.lost.then(() => lostDaemonLine("console", url)),
  };
}

/** What an attached console or chat says, once, when its daemon went away under it: what happened and what to run. */
export function lostDaemonLine(command: "console" | "chat", url: string): string {
  return `albedo ${command}: the daemon at ${url} stopped (or closed this session), so the ${command} ends; run \`albedo ${command}\` again (it starts an embedded session when no daemon runs)`;
}

/** Invalid skill rows in a daemon session's management catalog (D-3); 0 when it cannot be read. */
async function remoteInvalidSkills(remote: RemoteSession): Promise<number> {
  const catalog = await remote.catalog().catch(() => undefined);
  return catalog?.skills.filter((row) => row.status === "invalid").length ?? 0;
}

/** The console's session: one held by the daemon named in daemon.json when it answers, else an embedded one (D-5). */
export async function openConsoleSession(args: ParsedArgs, io: CliIO): Promise<ConsoleSession> {
  const daemon = await findRunningDaemon(stateDir(io.env));
  if (daemon === undefined) return embeddedConsoleSession(await openEmbeddedSession(args, io));
  const workspace = await workspaceOf(args, io);
  const done = startProgress(io.stderr, `albedo: opening a session on the daemon at ${daemon.info.url}`);
  try {
    const remote = await RemoteSession.open(daemon, workspace, "console", remoteOf(args));
    done();
    return remoteConsoleSession(remote, daemon.info.url, await remoteInvalidSkills(remote));
  } catch (error) {
    done("albedo: the daemon could not open a session");
    throw error;
  }
}
