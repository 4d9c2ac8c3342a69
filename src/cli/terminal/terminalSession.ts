/**
 * The session a terminal command talks to (D-5): one held by the daemon named in daemon.json when
 * it answers, else an embedded one (an in-process Session, and for chat a turn worker with a
 * memory conversation). The console and `albedo chat` read the same interface whichever they got.
 */
import { randomUUID } from "node:crypto";
import { BUILTIN_COMMANDS, completeSlash, describeResult, findCommand, parseSlashLine } from "../../commands/index.js";
import { findRunningDaemon, RemoteSession, type ReceiptResource, type StreamMessage, type TurnResource } from "../../api/index.js";
import type { ExecuteOutput, InputHandler } from "../../kernel/index.js";
import { DenialLines } from "../../network/index.js";
import type { ModelMode } from "../../model/index.js";
import { installDir, stateDir } from "../../platform/index.js";
import type { Session } from "../../session/index.js";
import { activationBlock, type Activation } from "../../skills/index.js";
import { loadPrompts, MemoryConversationStore, TurnWorker, turnModel, type StoredRow, type TurnEnd, type TurnRequest } from "../../turns/index.js";
import type { ParsedArgs } from "../plumbing/args.js";
import type { CliIO } from "../plumbing/command.js";
import { startProgress } from "./progress.js";
import { pageTexts } from "./render.js";
import { networkOf, openEmbeddedSession, remoteOf, resumeOf } from "../plumbing/session.js";
import { workspaceOf } from "../plumbing/workspace.js";

/** Which terminal command holds the session: the daemon lists it as that client. */
export type TerminalClient = "console" | "chat";

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

/** What one chat line became. */
export type ChatResult = { readonly kind: "turn"; readonly end: TurnEnd } | { readonly kind: "builtin"; readonly value: unknown; readonly text: string };

export interface ChatHandlers {
  onRow(row: StoredRow): void;
  onText(delta: string): void;
  /** The width a built-in's text is laid out for: the person's terminal (TERMINAL_COLUMNS when absent). */
  readonly columns?: number;
}

export interface TerminalSession {
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
  /** Runs a slash command the console typed; returns the text to show. Throws with a message the console prints. */
  runSlash(name: string, text: string, columns: number): Promise<string>;
  /** Submits one chat line (a message, a skill command, or a built-in run at once) and runs it to its end; rows and prose stream to `handlers`. */
  submit(line: string, handlers: ChatHandlers): Promise<ChatResult>;
  /** Python completions for a line, or none. */
  completeCode(line: string): Promise<[string[], string]>;
  /** Ends the running turn (its model request and its cell), else interrupts the running cell. */
  interrupt(): Promise<void>;
  close(): Promise<void>;
  /** Settles with the line to show when the session ended under the command (its daemon stopped); never for an embedded one. */
  readonly lost?: Promise<string>;
  /** The line of the kernel's last restore from a checkpoint (a resume), when it had one. */
  restoreLine(): string | undefined;
  /** Calls `listener` with the line of each later restore (the kernel died and came back, a restart with restore), until disposed. */
  onRestore(listener: (line: string) => void): { dispose(): void };
  /** Calls `listener` with the one line of each connection the kernel's egress proxy refuses, as it happens (repeats counted into a later line), until disposed. */
  onNetworkDenial(listener: (line: string) => void): { dispose(): void };
}

/** How long a Python completion may take before the console gives up on it. */
export const COMPLETION_TIMEOUT_MS = 1_000;

/** Why a typed skill command runs no model turn in the console. */
const NO_MODEL_NOTE = "the console runs no model turn (`albedo chat` does); the instructions are available to Python via commands";

/** The session for `client`: on the running daemon when one answers, else embedded. `mode` is a one-run model mode, for embedded chats. */
export async function openTerminalSession(args: ParsedArgs, io: CliIO, client: TerminalClient, mode?: ModelMode): Promise<TerminalSession> {
  const daemon = await findRunningDaemon(stateDir(io.env));
  if (daemon === undefined) return new EmbeddedTerminal(await openEmbeddedSession(args, io), io.env, mode);
  // The daemon's turns run with its settings.
  if (mode !== undefined) io.stderr.write(`albedo ${client}: --mode is ignored attached to a daemon; it uses the model.mode setting\n`);
  const workspace = await workspaceOf(args, io);
  const done = startProgress(io.stderr, `albedo: opening a session on the daemon at ${daemon.info.url}`);
  try {
    const remote = await RemoteSession.open(daemon, workspace, client, remoteOf(args), resumeOf(args), networkOf(args));
    done();
    return new DaemonTerminal(remote, daemon.info.url, client, await remoteInvalidSkills(remote));
  } catch (error) {
    done("albedo: the daemon could not open a session");
    throw error;
  }
}

/** An in-process session: cells run here, and turns on a worker made with the first chat line, whose conversation lives in memory for this run. */
class EmbeddedTerminal implements TerminalSession {
  readonly where = "embedded";
  private turns: { readonly worker: TurnWorker; readonly waiting: TurnRequest[]; readonly ends: Map<string, TurnEnd> } | undefined;
  private handlers: ChatHandlers | undefined;
  private readonly denials = new Set<DenialLines>();

  constructor(private readonly session: Session, private readonly env: NodeJS.ProcessEnv, private readonly mode: ModelMode | undefined) {}

  get id(): string {
    return this.session.id;
  }

  restoreLine(): string | undefined {
    return this.session.restores.last?.summary;
  }

  get network(): string {
    return this.session.network.state().text;
  }

  onRestore(listener: (line: string) => void): { dispose(): void } {
    return this.session.restores.observe((report) => listener(report.summary));
  }

  onNetworkDenial(listener: (line: string) => void): { dispose(): void } {
    const egress = this.session.network.egress;
    if (egress === undefined) return { dispose: () => undefined };
    const lines = new DenialLines(egress, (notice) => listener(notice.text));
    this.denials.add(lines);
    return {
      dispose: () => {
        this.denials.delete(lines);
        lines.dispose();
      },
    };
  }

  get summary(): SkillSummary {
    return { skills: this.session.view.snapshot.skills.length, withErrors: invalidSkills(this.session.view.discovered.diagnostics) };
  }

  commandNames(): readonly string[] {
    return this.session.view.commands.commands.map((command) => command.name);
  }

  completeSlash(line: string): readonly string[] {
    return completeSlash(this.session.view.commands.commands, line);
  }

  async execute(code: string, onOutput: (output: ExecuteOutput) => void, onInput?: InputHandler): Promise<CellResult> {
    const future = this.session.kernel.execute(code, onInput ? { onInput } : {});
    future.onOutput(onOutput);
    const reply = await future.done.finally(() => {
      // The cell's repeated denials are counted into their line now, before the next prompt.
      for (const lines of this.denials) lines.flush();
    });
    return { status: reply.status, pages: pageTexts(reply) };
  }

  async runSlash(name: string, text: string, columns: number): Promise<string> {
    const { view } = this.session;
    const command = this.session.commands.prepare(name, text, "user");
    if (command === undefined) throw this.session.commands.notFound(name);
    const result = await command.run();
    const shown = describeResult(findCommand(view.commands, command.command.name), result, columns);
    return command.command.submitsTurn ? `${shown}(${NO_MODEL_NOTE})\n` : shown;
  }

  async submit(line: string, sink: ChatHandlers): Promise<ChatResult> {
    const request = await this.turnRequest(line, sink.columns);
    if ("value" in request) return { kind: "builtin", value: request.value, text: request.text };
    const turns = this.turnWorker();
    this.handlers = sink;
    turns.waiting.push(request);
    await turns.worker.kick();
    return { kind: "turn", end: turns.ends.get(request.turnId) ?? { result: "failed", error: "the turn did not run" } };
  }

  private turnWorker() {
    if (this.turns !== undefined) return this.turns;
    const { session } = this;
    const waiting: TurnRequest[] = [];
    const ends = new Map<string, TurnEnd>();
    const worker = new TurnWorker({
      sessionId: session.id,
      host: session,
      queue: { take: () => waiting.shift(), finish: (turnId, end) => void ends.set(turnId, end) },
      conversations: new MemoryConversationStore(),
      prompts: loadPrompts(installDir()),
      model: () => turnModel(session.view.selection.scopes, this.env, this.mode),
      onRow: (row) => this.handlers?.onRow(row),
      onText: (_turnId, delta) => this.handlers?.onText(delta),
    });
    this.turns = { worker, waiting, ends };
    return this.turns;
  }

  /** The turn a line asks for, or a built-in's result when the line is one (run here and now). */
  private async turnRequest(line: string, columns: number | undefined): Promise<TurnRequest | { value: unknown; text: string }> {
    const { view } = this.session;
    const text = line.trim();
    const turnId = randomUUID();
    const slash = parseSlashLine(text);
    if (slash === undefined) return { turnId, visibleText: text, modelInput: text };
    const prepared = this.session.commands.prepare(slash.name, slash.text, "user");
    if (prepared === undefined) throw this.session.commands.notFound(slash.name);
    const result = await prepared.run();
    if (!prepared.command.submitsTurn) return { value: result, text: describeResult(findCommand(view.commands, prepared.command.name), result, columns) };
    const activation = { command: prepared.command.name, activation: result as Activation };
    return { turnId, visibleText: text, modelInput: activationBlock(activation), activation };
  }

  async completeCode(line: string): Promise<[string[], string]> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("timeout")), COMPLETION_TIMEOUT_MS)));
    try {
      const reply = await Promise.race([this.session.kernel.complete(line, line.length), timeout]);
      if (reply.status !== "ok") return [[], line];
      const head = line.slice(0, reply.cursor_start);
      return [reply.matches.map((match) => head + match), line];
    } finally {
      clearTimeout(timer);
    }
  }

  async interrupt(): Promise<void> {
    if (await this.turns?.worker.interrupt()) return;
    await this.session.kernel.interrupt();
  }

  async close(): Promise<void> {
    await this.turns?.worker.close();
    await this.session.close();
  }
}

/** A session held by a daemon: it records typed commands as operations (C-6) and runs the turns (its model, its settings). */
class DaemonTerminal implements TerminalSession {
  readonly where: string;
  readonly lost: Promise<string>;

  constructor(private readonly remote: RemoteSession, url: string, client: TerminalClient, private readonly withErrors: number) {
    this.where = `daemon ${url}`;
    this.lost = remote.lost.then(() => lostDaemonLine(client, url));
  }

  get id(): string {
    return this.remote.id;
  }

  restoreLine(): string | undefined {
    return this.remote.resource.kernel.restore?.summary;
  }

  get network(): string {
    return this.remote.resource.network.text;
  }

  onNetworkDenial(listener: (line: string) => void): { dispose(): void } {
    return this.remote.watch((message) => {
      if (message.type === "network") listener(message.text);
    });
  }

  /** A restore reaches the stream as a status message whose kernel carries a restore not seen before. */
  onRestore(listener: (line: string) => void): { dispose(): void } {
    let seen = this.remote.resource.kernel.restore?.at;
    return this.remote.watch((message) => {
      if (message.type !== "status" || message.kernel.restore === null || message.kernel.restore.at === seen) return;
      seen = message.kernel.restore.at;
      listener(message.kernel.restore.summary);
    });
  }

  get summary(): SkillSummary {
    return { skills: this.remote.resource.composition.extensions.skills.skills, withErrors: this.withErrors };
  }

  commandNames(): readonly string[] {
    return this.remote.resource.commands.map((command) => command.name);
  }

  completeSlash(line: string): readonly string[] {
    return completeSlash(this.remote.resource.commands.map((command) => ({ ...command, ...builtin(command.name) })), line);
  }

  execute(code: string, onOutput: (output: ExecuteOutput) => void): Promise<CellResult> {
    return this.remote.execute(code, (output) => onOutput({ header: { msg_type: output.msg_type }, content: output.content } as unknown as ExecuteOutput));
  }

  async runSlash(name: string, text: string, columns: number): Promise<string> {
    const outcome = await this.remote.command(name, text);
    if (outcome.kind === "failed") throw new Error(outcome.reason);
    if (outcome.kind === "result") return describeResult(builtin(name), outcome.value, columns);
    return `submitted ${name} as turn ${outcome.turnId}: the daemon's model answers it (\`albedo chat\` shows the conversation)\n`;
  }

  /** A built-in runs through the events route and answers at once; anything else is admitted and its turn followed on the stream. */
  async submit(line: string, sink: ChatHandlers): Promise<ChatResult> {
    const { remote } = this;
    const text = line.trim();
    const slash = parseSlashLine(text);
    const declared = slash === undefined ? undefined : remote.resource.commands.find((command) => command.name === slash.name);
    if (slash !== undefined && declared !== undefined && !declared.submits_turn) {
      const outcome = await remote.command(slash.name, slash.text);
      if (outcome.kind === "failed") throw new Error(outcome.reason);
      const value = outcome.kind === "result" ? outcome.value : null;
      return { kind: "builtin", value, text: describeResult(builtin(declared.name), value, sink.columns) };
    }
    return await followTurn(remote, sink, () => remote.admit(slash === undefined ? { type: "message", text } : { type: "command", command: slash.name, arguments: slash.text }));
  }

  async completeCode(line: string): Promise<[string[], string]> {
    return [[], line];
  }

  interrupt(): Promise<void> {
    return this.remote.interrupt();
  }

  close(): Promise<void> {
    return this.remote.close();
  }
}

/** A built-in's declaration by name (undefined for a skill's command). */
function builtin(name: string) {
  return findCommand({ revision: "", commands: BUILTIN_COMMANDS }, name);
}

/** What an attached console or chat says, once, when its daemon went away under it: what happened and what to run. */
function lostDaemonLine(command: TerminalClient, url: string): string {
  return `albedo ${command}: the daemon at ${url} stopped (or closed this session), so the ${command} ends; run \`albedo ${command}\` again (it starts an embedded session when no daemon runs)`;
}

/** Skill directories with at least one error diagnostic: each is a skill the session left out. */
function invalidSkills(diagnostics: readonly { severity: string; path: string }[]): number {
  return new Set(diagnostics.filter((d) => d.severity === "error").map((d) => d.path)).size;
}

/** Invalid skill rows in a daemon session's management catalog (D-3); 0 when it cannot be read. */
async function remoteInvalidSkills(remote: RemoteSession): Promise<number> {
  const catalog = await remote.catalog().catch(() => undefined);
  return catalog?.skills.filter((row) => row.status === "invalid").length ?? 0;
}

/**
 * Admits an input and follows its turn on the stream to its end. Messages that arrive before the
 * receipt names the turn are held, then replayed: the stream and the answer travel apart.
 */
async function followTurn(remote: RemoteSession, sink: ChatHandlers, admit: () => Promise<ReceiptResource>): Promise<ChatResult> {
  const held: StreamMessage[] = [];
  let turnId: string | undefined;
  let finish!: (end: TurnEnd) => void;
  const ended = new Promise<TurnEnd>((resolve) => (finish = resolve));
  const handle = (message: StreamMessage) => {
    if (turnId === undefined) return void held.push(message);
    if (message.type === "row" && message.row.turn_id === turnId) sink.onRow(message.row);
    else if (message.type === "text" && message.turn_id === turnId) sink.onText(message.delta);
    else if (message.type === "transcript" && message.turn.turn_id === turnId) {
      const end = turnEndOf(message.turn.outcome);
      if (end !== undefined) finish(end);
    }
  };
  const watching = remote.watch(handle);
  try {
    turnId = (await admit()).turn_id;
    for (const message of held.splice(0)) handle(message);
    return { kind: "turn", end: await ended };
  } finally {
    watching.dispose();
  }
}

/** How a turn's outcome reads as a chat result; undefined while it has none. */
function turnEndOf(outcome: TurnResource["outcome"]): TurnEnd | undefined {
  if (outcome === null) return undefined;
  if (outcome.state === "committed") {
    const usage = outcome.usage === null ? {} : { usage: outcome.usage };
    if (outcome.result === "completed") return { result: "completed", reply: typeof outcome.reply === "string" ? outcome.reply : "", ...usage };
    if (outcome.result === "failed") return { result: "failed", error: outcome.error ?? "the turn failed", ...usage };
    return { result: "interrupted", ...usage };
  }
  return { result: "failed", error: outcome.reason ?? `the turn was ${outcome.state}` };
}
