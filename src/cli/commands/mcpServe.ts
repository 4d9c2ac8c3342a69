/**
 * `albedo mcp serve`: albedo as an MCP server on stdio (P-1, P-5), in whichever era the client
 * opens with (the `initialize` handshake, or 2026-07-28's per-request envelope), one session per
 * process, and
 * `albedo mcp config CLIENT`: the entry an MCP client's configuration needs to start it. stdout
 * carries protocol only; everything a person should read goes to stderr.
 */
import { stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Readable, Writable } from "node:stream";
import type { Server } from "@modelcontextprotocol/server";
import { serveStdio, StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { buildServer, ConnectionSessions, MAX_NOISE_CHECK_BYTES, MAX_NOISE_LINES, MCP_SERVE_MAX_MESSAGE_BYTES, ROOTS_TIMEOUT_MS, TaskStore } from "../../mcpServer/index.js";
import { homeDir, installDir, stateDir } from "../../platform/index.js";
import { Session } from "../../session/index.js";
import { visibleControls } from "../../text/index.js";
import { LineFrames, LineTooLong } from "../../json/index.js";
import { stringOption, UsageError, type ParsedArgs } from "../plumbing/args.js";
import { SANDBOX_OPTION, WORKSPACE_OPTION, type CliCommand, type CliIO } from "../plumbing/command.js";
import { MCP_CLIENTS, type McpClient } from "./mcpClients.js";
import { sandboxOf } from "../plumbing/session.js";
import { workspaceOf } from "../plumbing/workspace.js";


/** stderr lines of one connection, each said once and bounded: the log of a server a person rarely watches. */
class Diagnostics {
  private said = 0;
  private dropped = 0;

  constructor(private readonly io: CliIO) {}

  line(text: string): void {
    if (this.said >= MAX_NOISE_LINES) {
      this.dropped += 1;
      return;
    }
    this.said += 1;
    this.io.stderr.write(`albedo mcp serve: ${visibleControls(text.slice(0, 500))}\n`);
  }

  summary(): void {
    if (this.dropped > 0) this.io.stderr.write(`albedo mcp serve: ${this.dropped} more diagnostics not shown (MAX_NOISE_LINES = ${MAX_NOISE_LINES})\n`);
  }
}

/** The workspace of a connection without --workspace: the client's first root when it offers roots, else the current directory. */
async function rootsWorkspace(server: Server, io: CliIO, say: Diagnostics): Promise<string> {
  if (server.getClientCapabilities()?.roots === undefined) return io.cwd;
  try {
    const { roots } = await server.listRoots(undefined, { timeout: ROOTS_TIMEOUT_MS });
    const first = roots[0]?.uri;
    if (first === undefined) return io.cwd;
    if (!first.startsWith("file://")) {
      say.line(`the client's first root ${first} is not a file: URL; serving the current directory ${io.cwd}`);
      return io.cwd;
    }
    const path = fileURLToPath(first);
    if ((await stat(path).catch(() => undefined))?.isDirectory()) return path;
    say.line(`the client's first root ${path} is not a directory; serving the current directory ${io.cwd}`);
  } catch (error) {
    say.line(`the client did not list its roots within ${ROOTS_TIMEOUT_MS} ms (ROOTS_TIMEOUT_MS): ${(error as Error).message}; serving the current directory ${io.cwd}`);
  }
  return io.cwd;
}

/** Why a stdio line is not a JSON message, or undefined when it is (or is too long to check beyond its first byte). */
function noise(line: Buffer): string | undefined {
  const text = line.subarray(0, MAX_NOISE_CHECK_BYTES + 1).toString("utf8").trim();
  if (text === "") return undefined;
  if (line.length > MAX_NOISE_CHECK_BYTES) return text.startsWith("{") || text.startsWith("[") ? undefined : `a line starting ${JSON.stringify(text.slice(0, 40))}`;
  try {
    JSON.parse(text);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

async function serve(args: ParsedArgs, io: CliIO): Promise<number> {
  if (args.positionals.length > 0) throw new UsageError("takes no arguments");
  const flagged = stringOption(args, "workspace") === undefined ? undefined : await workspaceOf(args, io);
  const sandbox = sandboxOf(args);
  const say = new Diagnostics(io);
  const sessions = new ConnectionSessions();
  const tasks = new TaskStore();
  let session: Session | undefined;
  let opening: Promise<void> | undefined;
  const open = (workspace: string) => {
    opening ??= (async () => {
      try {
        session = await Session.open({
          workspace,
          home: homeDir(io.env),
          stateDir: stateDir(io.env),
          env: io.env,
          ...(sandbox ? { sandbox } : {}),
          log: (level, message) => {
            if (level === "warn" || level === "error") say.line(`${level}: ${message}`);
          },
        });
        sessions.attach(session);
        say.line(`session ${session.id} on ${workspace} (${session.status().sandbox === "bwrap" ? "sandboxed" : "not sandboxed"})`);
      } catch (error) {
        say.line(`the session did not open: ${(error as Error).message}`);
        sessions.fail(error);
      }
    })();
    return opening;
  };
  // With --workspace the kernel boots while the client opens; otherwise the legacy client's roots
  // decide, and a 2026-07-28 client (which has no roots) gets the current directory.
  if (flagged !== undefined) void open(flagged);

  // Whole lines reach the SDK's buffer, which copies what it holds on every chunk: a long message costs one copy, not one per chunk.
  const frames = io.stdin.pipe(new LineFrames(MCP_SERVE_MAX_MESSAGE_BYTES));
  frames.on("data", (line: Buffer) => {
    const problem = noise(line);
    if (problem !== undefined) say.line(`ignored input that is not a JSON-RPC message: ${problem}`);
  });
  const transport = new StdioServerTransport(frames as unknown as Readable, io.stdout as Writable, { maxBufferSize: MCP_SERVE_MAX_MESSAGE_BYTES });
  const built: { dispose(): void }[] = [];
  const handle = serveStdio(
    ({ era }) => {
      const { server, dispose } = buildServer({ era, sessions, tasks, taskOwner: "stdio", announce: true });
      built.push({ dispose });
      if (flagged === undefined) {
        if (era === "modern") sessions.openWhenAsked(() => void open(io.cwd));
        else server.oninitialized = () => void rootsWorkspace(server, io, say).then(open);
      }
      return server;
    },
    {
      transport,
      onerror: (error) => {
        const oversize = error instanceof LineTooLong || /exceeded maximum size/.test(error.message);
        say.line(oversize ? `a message over ${MCP_SERVE_MAX_MESSAGE_BYTES} bytes (MCP_SERVE_MAX_MESSAGE_BYTES) arrived; the connection is closed` : `ignored input that is not a JSON-RPC message: ${error.message.split("\n")[0]}`);
      },
    },
  );
  // The entry owns the transport's close: hear it after the entry did.
  const closed = new Promise<void>((done) => {
    const entryClose = transport.onclose;
    transport.onclose = () => {
      entryClose?.();
      done();
    };
  });
  const end = () => void handle.close();
  frames.once("error", end);
  io.stdin.once("end", end);
  process.once("SIGTERM", end);
  process.once("SIGINT", end);
  try {
    await closed;
  } finally {
    process.off("SIGTERM", end);
    process.off("SIGINT", end);
    for (const server of built) server.dispose();
    sessions.dispose();
    tasks.close();
    await opening;
    // The client is gone: a running cell ends with its kernel, which shuts down in order.
    await session?.close();
    say.summary();
  }
  return 0;
}

export const mcpServe: CliCommand = {
  options: [
    { ...WORKSPACE_OPTION, help: "the workspace to serve (default: the client's first root, else the current directory)" },
    SANDBOX_OPTION,
  ],
  run: serve,
};

/** Claude Code's scopes for a server: `local` (this project, for you), `user` (every project), `project` (shared in .mcp.json). */
const CLAUDE_CODE_SCOPES = ["local", "user", "project"] as const;
type ClaudeCodeScope = (typeof CLAUDE_CODE_SCOPES)[number];

/**
 * The command line that starts the server: this Node and this install's albedo, absolute, so a
 * client with another PATH finds them. With a workspace it serves that one; without, the client's
 * project (its first root, else the directory it starts the server in).
 */
function launch(workspace: string | undefined): { command: string; args: string[] } {
  return { command: process.execPath, args: [join(installDir(), "bin", "albedo"), "mcp", "serve", ...(workspace === undefined ? [] : ["--workspace", workspace])] };
}

/** `claude mcp add` for `scope`, the option in its place: a user or project server serves whichever project Claude Code runs it in. */
function claudeCodeEntry(workspace: string, scope: ClaudeCodeScope): { where: string; text: string } {
  const { command, args } = launch(scope === "local" ? workspace : undefined);
  const where = {
    local: "run this in a shell, in the project; `albedo mcp config claude-code --scope user` prints the line for every project, `--scope project` the one to share in .mcp.json",
    user: "run this in a shell: Claude Code then starts albedo in every project, on that project",
    project: "run this in a shell, in the project: it goes into .mcp.json, and albedo serves whichever checkout Claude Code runs it in",
  }[scope];
  return { where, text: `claude mcp add${scope === "local" ? "" : ` --scope ${scope}`} albedo -- ${[command, ...args].map(shellWord).join(" ")}\n` };
}

/** The entry for `client`, and where it goes. */
export function clientEntry(client: McpClient, workspace: string, home: string, scope: ClaudeCodeScope = "local"): { where: string; text: string } {
  const { command, args } = launch(workspace);
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  switch (client) {
    case "claude-desktop":
      return {
        where: `add to "mcpServers" in Claude Desktop's claude_desktop_config.json (Settings → Developer → Edit Config; on macOS ${join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json")}), then restart Claude Desktop`,
        text: json({ mcpServers: { albedo: { command, args } } }),
      };
    case "claude-code":
      return claudeCodeEntry(workspace, scope);
    case "cursor":
      return { where: `add to "mcpServers" in ${join(workspace, ".cursor", "mcp.json")} (this project) or ${join(home, ".cursor", "mcp.json")} (every project)`, text: json({ mcpServers: { albedo: { command, args } } }) };
    case "codex":
      return { where: `add to ${join(home, ".codex", "config.toml")}`, text: `[mcp_servers.albedo]\ncommand = ${JSON.stringify(command)}\nargs = [${args.map((arg) => JSON.stringify(arg)).join(", ")}]\n` };
    case "vscode":
      return { where: `add to "servers" in ${join(workspace, ".vscode", "mcp.json")}, then start it from the MCP: List Servers command`, text: json({ servers: { albedo: { type: "stdio", command, args } } }) };
  }
}

/** A word as a POSIX shell reads it back unchanged. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

export const mcpConfig: CliCommand = {
  options: [WORKSPACE_OPTION, { name: "scope", value: "SCOPE", help: `claude-code only: ${CLAUDE_CODE_SCOPES.join(", ")} (default local: this project; user: every project; project: shared in .mcp.json)` }],
  async run(args, io) {
    const [client, ...rest] = args.positionals;
    if (client === undefined || rest.length > 0) throw new UsageError(`takes one CLIENT: ${MCP_CLIENTS.join(", ")}`);
    if (!(MCP_CLIENTS as readonly string[]).includes(client)) throw new UsageError(`unknown client "${visibleControls(client)}"; one of ${MCP_CLIENTS.join(", ")}`);
    const scope = stringOption(args, "scope") ?? "local";
    if (scope !== "local" && client !== "claude-code") throw new UsageError("--scope goes with claude-code; the other clients' entries say where they go");
    if (!(CLAUDE_CODE_SCOPES as readonly string[]).includes(scope)) throw new UsageError(`--scope takes ${CLAUDE_CODE_SCOPES.join(", ")}, got "${visibleControls(scope)}"`);
    const workspace = resolve(await workspaceOf(args, io));
    const entry = clientEntry(client as McpClient, workspace, homeDir(io.env), scope as ClaudeCodeScope);
    io.stderr.write(`albedo mcp config: ${entry.where}\n`);
    io.stdout.write(entry.text);
    return 0;
  },
};
