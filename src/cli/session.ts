import { unknownCommand } from "../commands/index.js";
import { findRunningDaemon, RemoteSession } from "../daemon/index.js";
import type { ExecuteOutput, InputHandler } from "../kernel/index.js";
import { Session } from "../session/index.js";
import { homeDir, stateDir } from "../settings/paths.js";
import { stringOption, UsageError, type ParsedArgs } from "./args.js";
import { SANDBOX_MODES, type SandboxMode } from "../sandbox/index.js";
import { remoteUrlProblem } from "../kernel/index.js";
import type { CliIO } from "./command.js";
import { startProgress } from "./progress.js";
import { renderValue } from "./render.js";
import { workspaceOf } from "./workspace.js";

/** Opens an in-process session (D-5) with boot progress on a terminal's stderr. */
export async function openEmbeddedSession(args: ParsedArgs, io: CliIO): Promise<Session> {
  const workspace = await workspaceOf(args, io);
  const sandbox = sandboxOf(args);
  const remote = remoteOf(args);
  const done = startProgress(io.stderr, remote ? `albedo: starting a kernel on ${remote.url}` : "albedo: starting the kernel");
  try {
    const session = await Session.open({
      workspace,
      home: homeDir(io.env),
      stateDir: stateDir(io.env),
      env: io.env,
      ...(sandbox ? { sandbox } : {}),
      ...(remote ? { remote } : {}),
      log: (level, message, data) => {
        if (level === "warn" || level === "error") io.stderr.write(`albedo ${level}: ${message}${data ? ` ${JSON.stringify(data)}` : ""}\n`);
      },
    });
    done();
    return session;
  } catch (error) {
    done("albedo: the kernel did not start");
    throw error;
  }
}

/** The --remote override, when given; a URL that cannot name a server is a usage error. */
export function remoteOf(args: ParsedArgs): { url: string } | undefined {
  const url = stringOption(args, "remote");
  if (url === undefined) return undefined;
  const problem = remoteUrlProblem(url);
  if (problem) throw new UsageError(`--remote ${problem}`);
  return { url };
}

/** The --sandbox override, when given; a value outside auto|required|off is a usage error. */
export function sandboxOf(args: ParsedArgs): SandboxMode | undefined {
  const given = stringOption(args, "sandbox");
  if (given === undefined) return undefined;
  if (!(SANDBOX_MODES as readonly string[]).includes(given)) throw new UsageError(`--sandbox must be one of ${SANDBOX_MODES.join(", ")}, got "${given}"`);
  return given as SandboxMode;
}

/** What the console needs from a session, embedded (in-process) or held by a running daemon (D-5). */
export interface ConsoleSession {
  readonly id: string;
  /** "embedded", or "daemon <url>". */
  readonly where: string;
  skillCount(): number;
  /** Slash names for completion, from the session's current command catalog. */
  commandNames(): readonly string[];
  /** Runs a cell; outputs stream to `onOutput`. Returns the reply status ("ok", "error", "aborted"). */
  execute(code: string, onOutput: (output: ExecuteOutput) => void, onInput?: InputHandler): Promise<string>;
  /** Runs a typed slash command; returns the text to show. Throws with a message the console prints. */
  runSlash(name: string, text: string): Promise<string>;
  /** Python completions for a line, or none. */
  completeCode(line: string): Promise<[string[], string]>;
  interrupt(): Promise<void>;
  close(): Promise<void>;
}

/** How long a Python completion may take before the console gives up on it. */
export const COMPLETION_TIMEOUT_MS = 1_000;

/** Why a typed skill command runs no model turn in the console. */
const NO_MODEL_NOTE = "the console runs no model turn (`albedo chat` does); the instructions are available to Python via commands";

/** The console's view of an in-process Session. */
export function embeddedConsoleSession(session: Session): ConsoleSession {
  return {
    id: session.id,
    where: "embedded",
    skillCount: () => session.view.snapshot.skills.length,
    commandNames: () => session.view.commands.commands.map((command) => command.name),
    async execute(code, onOutput, onInput) {
      const future = session.execute(code, onInput ? { onInput } : {});
      future.onOutput(onOutput);
      return (await future.done).status;
    },
    async runSlash(name, text) {
      const command = session.prepare(name, text, "user");
      if (command === undefined) throw unknownCommand(name);
      const result = await command.run();
      if (!command.command.submitsTurn) return renderValue(result);
      const activation = result as { name: string; source: string; instructions: string };
      return `activated skill ${activation.name} · ${Buffer.byteLength(activation.instructions)} bytes from ${activation.source}\n(${NO_MODEL_NOTE})\n`;
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
export function remoteConsoleSession(remote: RemoteSession, url: string): ConsoleSession {
  return {
    id: remote.id,
    where: `daemon ${url}`,
    skillCount: () => remote.resource.composition.extensions.skills.skills,
    commandNames: () => remote.resource.commands.map((command) => command.name),
    execute: (code, onOutput) => remote.execute(code, (output) => onOutput({ header: { msg_type: output.msg_type }, content: output.content } as unknown as ExecuteOutput)),
    async runSlash(name, text) {
      const outcome = await remote.command(name, text);
      if (outcome.kind === "failed") throw new Error(outcome.reason);
      if (outcome.kind === "result") return renderValue(outcome.value);
      return `submitted ${name} as turn ${outcome.turnId}: the daemon's model answers it (\`albedo chat\` shows the conversation)\n`;
    },
    completeCode: async (line) => [[], line],
    interrupt: () => remote.interrupt(),
    close: () => remote.close(),
  };
}

/** The console's session: one held by the daemon named in daemon.json when it answers, else an embedded one (D-5). */
export async function openConsoleSession(args: ParsedArgs, io: CliIO): Promise<ConsoleSession> {
  const daemon = await findRunningDaemon(stateDir(io.env));
  if (daemon === undefined) return embeddedConsoleSession(await openEmbeddedSession(args, io));
  const workspace = await workspaceOf(args, io);
  const done = startProgress(io.stderr, `albedo: opening a session on the daemon at ${daemon.info.url}`);
  try {
    const remote = await RemoteSession.open(daemon, workspace, remoteOf(args));
    done();
    return remoteConsoleSession(remote, daemon.info.url);
  } catch (error) {
    done("albedo: the daemon could not open a session");
    throw error;
  }
}
