/** `albedo mcp serve` driven as MCP clients drive it: the official SDK Client over stdio, or raw lines on a real process. */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { SessionDirs } from "../session/fixtures.js";
import { killDaemon, makeDirs, startDaemon, type DaemonProcess, type Dirs } from "../daemon/support/daemon.js";
import { roots, writeSkill } from "../support/skills.js";

import { ALBEDO_BIN as BIN } from "../support/cli.js";

export { BIN };

export function serveEnv(dirs: SessionDirs): NodeJS.ProcessEnv {
  return { ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.stateDir };
}

export interface Served {
  readonly client: Client;
  readonly stderr: () => string;
  close(): Promise<void>;
}

/** An SDK client on `albedo mcp serve` (`args` after `serve`); `roots` makes the client offer those roots. */
export async function serveClient(dirs: SessionDirs, args: readonly string[], options: { roots?: readonly string[] } = {}): Promise<Served> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "mcp", "serve", ...args], env: serveEnv(dirs) as Record<string, string>, cwd: dirs.root, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: "albedo-test", version: "1.0.0" }, options.roots ? { capabilities: { roots: {} } } : {});
  if (options.roots) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: options.roots!.map((path) => ({ uri: `file://${path}` })) }));
  await client.connect(transport);
  return { client, stderr: () => stderr, close: () => client.close() };
}

/** A raw `albedo mcp serve` process: lines in, parsed lines out. */
export class RawServe {
  readonly child: ChildProcessWithoutNullStreams;
  stdout = "";
  stderr = "";
  readonly exited: Promise<number | null>;

  constructor(dirs: SessionDirs, args: readonly string[]) {
    this.child = spawn(process.execPath, [BIN, "mcp", "serve", ...args], { env: serveEnv(dirs), cwd: dirs.root });
    this.child.stdout.on("data", (chunk: Buffer) => (this.stdout += chunk.toString()));
    this.child.stderr.on("data", (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => this.child.on("close", resolve));
    // A server that closes on an oversized message stops reading: the rest of the write fails with EPIPE.
    this.child.stdin.on("error", () => undefined);
  }

  send(line: string | object): void {
    this.child.stdin.write(`${typeof line === "string" ? line : JSON.stringify(line)}\n`);
  }

  /** Every line written to stdout so far, parsed; a line that is not JSON fails the test here. */
  messages(): Record<string, unknown>[] {
    return this.stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  /** Waits until a message with `id` came back (within `ms`), and returns it. */
  async answer(id: number, ms = 60_000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.messages().find((message) => message.id === id);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no answer to ${id} within ${ms} ms; stdout ${this.stdout.slice(-500)} stderr ${this.stderr.slice(-500)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async initialize(id = 0): Promise<void> {
    this.send({ jsonrpc: "2.0", id, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
    await this.answer(id);
    this.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  }

  async close(): Promise<number | null> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 30_000);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Processes whose command line mentions `marker` (a test's temp root): what a served session left running. */
export function processesMentioning(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "latin1").includes(marker)) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** An 8×8 red PNG, made by hand (IHDR, IDAT, IEND with their CRCs). */
export const TINY_PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAEklEQVR4nGP4z8CAFWEXHbQSACj/P8Fu7N9hAAAAAElFTkSuQmCC";

/** A real daemon on loopback (`args` after the defaults) whose workspace has the skill `demo`: what the /mcp suites serve. */
export async function mcpDaemon(args: readonly string[] = []): Promise<{ dirs: Dirs; daemon: DaemonProcess }> {
  const dirs = await makeDirs();
  writeSkill(roots.wsAgents(dirs.workspace), "demo", { description: "Tidy up the files of a folder.", body: "# Demo\n\nTidy up.\n" });
  return { dirs, daemon: await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0", ...args]) };
}

/** Closes the clients, stops the daemon (SIGTERM: its sessions close first) and removes its dirs. */
export async function stopMcpDaemon(served: { dirs?: Dirs; daemon?: DaemonProcess }, clients: readonly { close(): Promise<unknown> }[]): Promise<void> {
  await Promise.allSettled(clients.map((client) => client.close()));
  if (served.daemon) await killDaemon(served.daemon, "SIGTERM");
  await served.dirs?.cleanup();
}
