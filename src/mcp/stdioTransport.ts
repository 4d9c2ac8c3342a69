/**
 * The stdio transport of a server process (M-2): stdout is cut into lines by LineFrames (each byte
 * scanned once, a line held in pieces until its newline), each line a message; serializeMessage is the SDK's.
 * The process runs in its own process group with exactly its launch's environment; stderr and
 * stdout lines that are not messages go to the log bounded; a message over MCP_MAX_MESSAGE_BYTES
 * breaks the connection. close() climbs the shutdown ladder until the whole group is gone.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { deserializeMessage, serializeMessage, type JSONRPCMessage, type Transport } from "@modelcontextprotocol/client";
import { LineFrames, LineTooLong } from "../json/index.js";
import type { Log } from "../platform/index.js";
import { sandboxServer, ServerSandboxError, type SandboxedProcess } from "../sandbox/index.js";
import { MCP_GROUP_POLL_MS, MCP_MAX_MESSAGE_BYTES, MCP_SIGKILL_WAIT_MS, MCP_SIGTERM_WAIT_MS, MCP_STDIN_CLOSE_WAIT_MS } from "./limits.js";
import type { Redactor } from "./redact.js";
import type { McpStdioLaunch } from "./resolve.js";
import { ServerOutput } from "./serverOutput.js";

/** Why a connection broke on our side: a message past the read bound. */
export class McpOversizeError extends Error {
  override readonly name = "McpOversizeError";
}

export interface StdioTransportOptions {
  readonly server: string;
  readonly launch: McpStdioLaunch;
  readonly log: Log;
  readonly redactor: Redactor;
}

/** What is spawned: the server itself, or bwrap with the descriptors its sandbox binds (released by dispose once the process is gone). */
type Spawnable = Omit<SandboxedProcess, "dispose"> & { readonly dispose?: () => void };

/** Process groups of live servers, killed when the runtime exits however close() was missed. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const group of liveGroups) signalGroup(group, "SIGKILL");
  });
}

function signalGroup(group: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-group, signal);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** True when no process of `group` is left. */
export function groupGone(group: number): boolean {
  return !signalGroup(group, 0);
}

export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  /** stdout as whole lines, each within MCP_MAX_MESSAGE_BYTES. */
  private lines: LineFrames | undefined;
  /** With `pid`, its name marks this as a stdio transport to the SDK, which then takes a silent era probe as a legacy server. */
  private readonly stderr: ServerOutput;
  private readonly noise: ServerOutput;
  private closing: Promise<void> | undefined;
  private closed = false;
  /** The sandbox the process runs in, released once it is gone. */
  private sandbox: Spawnable | undefined;
  /** Set when the connection broke because of what the server sent. */
  broken: Error | undefined;
  /** Whether any message came from the server. */
  private answered = false;

  constructor(private readonly options: StdioTransportOptions) {
    const common = { log: options.log, server: options.server, redactor: options.redactor };
    this.stderr = new ServerOutput({ ...common, stream: "stderr" });
    this.noise = new ServerOutput({ ...common, stream: "stdout" });
  }

  /** What spawns the server: its launch as it is, or wrapped in its sandbox (pinned until the process is gone). */
  private spawnable(): Spawnable {
    const { launch } = this.options;
    if (launch.sandbox === undefined) return { command: launch.command, args: launch.args, env: launch.env, fds: [] };
    try {
      return sandboxServer(launch.sandbox, launch);
    } catch (error) {
      throw Object.assign(new Error((error as Error).message), { code: error instanceof ServerSandboxError ? "ENOSANDBOX" : "ESANDBOX" });
    }
  }

  /** The process group (the server's pid), once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Whether the process ended without sending a single message (as some legacy servers do on the era probe). */
  get exitedBeforeAnswering(): boolean {
    return this.closed && !this.answered && this.broken === undefined;
  }

  /** The last lines the server wrote to stderr, redacted and cut. */
  stderrTail(): readonly string[] {
    return this.stderr.tail();
  }

  /**
   * Spawns the server, in its own sandbox when its launch says so; rejects when it may not start
   * (its approved files changed, no sandbox where it needs one) or cannot be spawned (no such
   * command, cwd missing). Those rejections carry a string `code`: starting again cannot help.
   */
  async start(): Promise<void> {
    const { launch } = this.options;
    const refused = launch.verify?.();
    if (refused !== undefined) throw Object.assign(new Error(refused), { code: "ENOTAPPROVED" });
    installExitHook();
    const spawnable = this.spawnable();
    this.sandbox = spawnable;
    const child = spawn(spawnable.command, [...spawnable.args], {
      cwd: launch.sandbox ? "/" : launch.cwd, env: { ...spawnable.env }, detached: true, stdio: ["pipe", "pipe", "pipe", ...spawnable.fds],
    });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    liveGroups.add(child.pid!);
    child.on("error", (error) => this.onerror?.(error));
    child.stdin!.on("error", () => undefined);
    child.stderr!.on("data", (chunk: Buffer) => this.stderr.write(chunk));
    const lines = new LineFrames(MCP_MAX_MESSAGE_BYTES);
    this.lines = lines;
    lines.on("data", (line: Buffer) => this.read(line));
    lines.once("error", (error) => {
      const cause = error instanceof LineTooLong ? `a message over ${MCP_MAX_MESSAGE_BYTES} bytes (MCP_MAX_MESSAGE_BYTES)` : `unreadable output (${error.message})`;
      this.break(new McpOversizeError(`mcp server ${this.options.server} sent ${cause}; the connection was dropped`));
    });
    child.stdout!.pipe(lines);
    // "close", not "exit": a last reply may still sit in the stdout pipe when the process exits.
    child.once("close", () => this.exited());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed || !stdin.writable) throw new Error(`mcp server ${this.options.server} is not running`);
    if (!stdin.write(serializeMessage(message))) await new Promise<void>((resolve) => stdin.once("drain", resolve));
  }

  /** Climbs the shutdown ladder: close stdin, wait, SIGTERM the group, wait, SIGKILL the group. */
  close(): Promise<void> {
    this.closing ??= this.ladder();
    return this.closing;
  }

  private async ladder(): Promise<void> {
    const group = this.child?.pid;
    if (group === undefined) return this.exited();
    this.child!.stdin!.end();
    if (!(await this.waitGone(group, MCP_STDIN_CLOSE_WAIT_MS))) {
      signalGroup(group, "SIGTERM");
      if (!(await this.waitGone(group, MCP_SIGTERM_WAIT_MS))) {
        signalGroup(group, "SIGKILL");
        await this.waitGone(group, MCP_SIGKILL_WAIT_MS);
      }
    }
    liveGroups.delete(group);
    this.exited();
  }

  private async waitGone(group: number, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!groupGone(group)) {
      if (Date.now() >= deadline) return false;
      await sleep(MCP_GROUP_POLL_MS);
    }
    return true;
  }

  /** One line of stdout: a message, else data to log (bounded), never a reason to stop reading. */
  private read(line: Buffer): void {
    if (this.broken) return;
    const text = line.toString("utf8").replace(/\r?\n$/, "");
    if (text.length === 0) return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(text);
    } catch (error) {
      this.noise.line(`not a JSON-RPC message: ${(error as Error).message}`);
      return;
    }
    this.answered = true;
    this.onmessage?.(message);
  }

  private break(error: Error): void {
    this.broken = error;
    // Nothing more is read: what the server still writes is left in the pipe, which closes with it.
    if (this.lines) this.child?.stdout?.unpipe(this.lines);
    this.onerror?.(error);
    if (this.child?.pid !== undefined) signalGroup(this.child.pid, "SIGKILL");
    void this.close();
  }

  private exited(): void {
    if (this.closed) return;
    this.closed = true;
    this.sandbox?.dispose?.();
    this.stderr.flush();
    this.noise.flush();
    // The group may outlive its leader; the ladder in close() still ends it.
    if (this.child?.pid !== undefined && groupGone(this.child.pid)) liveGroups.delete(this.child.pid);
    this.onclose?.();
  }
}
