/**
 * `albedo mcp list | add | remove | approve`: the MCP servers of the settings, changed the one way
 * settings change (through the daemon's settings API), and the approvals of project entries, which
 * live in the state dir beside the settings the daemon owns (never in the workspace a kernel writes).
 */
import { isStdioEntry, McpApprovals, McpHub, resolveServers, secretVariables, serverNameProblem, type McpSection, type McpServerEntry, type McpValue } from "../../mcp/index.js";
import { isAbsolute } from "node:path";
import { renderMcpServers } from "../../turns/index.js";
import type { SandboxMode } from "../../sandbox/index.js";
import { oneOffMcpPlaces } from "../../session/index.js";
import { stateDir } from "../../platform/index.js";
import { visibleControls } from "../../text/index.js";
import { CliFailure, UsageError, stringOption, type ParsedArgs } from "../plumbing/args.js";
import { JSON_OPTION, WORKSPACE_OPTION, writeJson, type CliCommand, type CliIO } from "../plumbing/command.js";
import { daemonFor } from "../plumbing/daemonAccess.js";
import { patch, readAll, SCOPE_OPTIONS, scopeOf, type Scope, type SettingsAnswer } from "./settingsCommands.js";
import { workspaceOf } from "../plumbing/workspace.js";

/** Characters of a command line or URL shown in `albedo mcp list`; the settings file holds it whole. */
const MAX_LISTED_LAUNCH_CHARS = 80;

type ServersOf = Readonly<Record<string, McpServerEntry>>;

function serversIn(answer: SettingsAnswer, scope: Scope): ServersOf {
  return answer[scope]?.settings.mcp?.servers ?? {};
}

/** What an entry runs: the command line, or the URL, cut for a table. */
function launchText(entry: McpServerEntry): string {
  const text = isStdioEntry(entry) ? [entry.command, ...(entry.args ?? [])].join(" ") : entry.url;
  return text.length > MAX_LISTED_LAUNCH_CHARS ? `${text.slice(0, MAX_LISTED_LAUNCH_CHARS - 1)}…` : text;
}

interface ListedServer {
  readonly name: string;
  readonly scope: Scope;
  readonly transport: "stdio" | "http";
  readonly launch: string;
  readonly reads: readonly string[];
  /** "starts", "needs approval", "off" or "cannot start", as a session opened from this shell would find it. */
  readonly state: string;
  readonly notes: readonly string[];
}

async function listed(answer: SettingsAnswer, workspace: string, io: CliIO): Promise<ListedServer[]> {
  const global = answer.global.settings.mcp;
  const project = answer.project?.settings.mcp;
  const approvals = await McpApprovals.load(stateDir(io.env), workspace);
  const places = oneOffMcpPlaces(io.env, workspace, answer.global.settings.sandbox);
  const resolved = resolveServers({ ...places, ...(global ? { global } : {}), ...(project ? { project } : {}), workspace, approvals, env: io.env });
  const rows: ListedServer[] = [];
  for (const scope of ["global", "project"] as const) {
    for (const [name, entry] of Object.entries(serversIn(answer, scope))) {
      const started = resolved.servers.find((server) => server.name === name);
      const inactive = resolved.inactive.find((server) => server.name === name);
      const stands = (started ?? inactive)?.origin === scope;
      const state = !stands ? "overridden" : started ? "starts" : inactive?.status === "failed" ? "cannot start" : scope === "project" && !approvals.isApproved(name, entry) ? "needs approval" : "off";
      const notes = stands ? resolved.diagnostics.filter((d) => d.server === name).map((d) => d.message) : [];
      rows.push({ name, scope, transport: isStdioEntry(entry) ? "stdio" : "http", launch: launchText(entry), reads: secretVariables(entry), state, notes });
    }
  }
  return rows;
}

export const mcpList: CliCommand = {
  options: [WORKSPACE_OPTION, JSON_OPTION],
  async run(args, io) {
    if (args.positionals.length > 0) throw new UsageError("takes no arguments");
    const workspace = await workspaceOf(args, io);
    const answer = await readAll(await daemonFor(io, "albedo mcp list"), workspace);
    const rows = await listed(answer, workspace, io);
    if (args.options.has("json")) {
      writeJson(io, { servers: rows });
      return 0;
    }
    if (rows.length === 0) {
      io.stdout.write("no MCP servers configured (add one with `albedo mcp add NAME -- COMMAND ARGS...`)\n");
      return 0;
    }
    const width = Math.max(...rows.map((row) => row.name.length));
    const lines = rows.flatMap((row) => [
      `${visibleControls(row.name.padEnd(width))}  ${row.scope.padEnd(7)}  ${row.state.padEnd(14)}  ${visibleControls(row.launch)}`,
      ...(row.reads.length > 0 ? [`${" ".repeat(width + 2)}reads ${row.reads.join(", ")} from the environment`] : []),
      ...row.notes.map((note) => `${" ".repeat(width + 2)}${visibleControls(note)}`),
    ]);
    io.stdout.write(`${lines.join("\n")}\n(the state is what a session opened from this shell's environment would find)\n`);
    return 0;
  },
};

/** `--env-from VAR[=HOST_VAR],…` or `--header-from NAME=HOST_VAR,…` as a map of secret references. */
function references(args: ParsedArgs, option: string, sameName: boolean): Record<string, McpValue> | undefined {
  const raw = stringOption(args, option);
  if (raw === undefined) return undefined;
  const map: Record<string, McpValue> = {};
  for (const item of raw.split(",").filter((part) => part !== "")) {
    const [key, host = sameName ? item : undefined] = item.includes("=") ? [item.slice(0, item.indexOf("=")), item.slice(item.indexOf("=") + 1)] : [item];
    if (!key || !host) throw new UsageError(`--${option} takes ${sameName ? "VAR or VAR=HOST_VAR" : "NAME=HOST_VAR"} items separated by commas, got ${item}`);
    map[key] = { from_env: host };
  }
  return map;
}

/** The entry `albedo mcp add` writes, from its arguments. */
function entryFrom(args: ParsedArgs, command: readonly string[]): McpServerEntry {
  const url = stringOption(args, "url");
  const shared = args.options.has("shared") ? { shared: true } : {};
  if (url !== undefined) {
    if (command.length > 0) throw new UsageError("give --url or a command after --, not both");
    if (args.options.has("env-from") || args.options.has("cwd")) throw new UsageError("--env-from and --cwd are for servers started as a command; an HTTP server takes --header-from");
    const headers = references(args, "header-from", false);
    return { url, ...(headers ? { headers } : {}), ...shared };
  }
  const [program, ...rest] = command;
  if (program === undefined) throw new UsageError("give the server's command after --, e.g. albedo mcp add files -- npx -y @modelcontextprotocol/server-filesystem /data, or --url URL");
  if (args.options.has("header-from")) throw new UsageError("--header-from is for a server reached by --url; a command takes --env-from");
  const env = references(args, "env-from", true);
  const cwd = stringOption(args, "cwd");
  return { command: program, ...(rest.length > 0 ? { args: rest } : {}), ...(env ? { env } : {}), ...(cwd !== undefined ? { cwd } : {}), ...shared };
}

function serverName(args: ParsedArgs): string {
  const name = args.positionals[0];
  if (name === undefined) throw new UsageError("name the server");
  const problem = serverNameProblem(name);
  if (problem !== undefined) throw new UsageError(`server name ${visibleControls(JSON.stringify(name))} ${problem}`);
  return name;
}

/** The servers map with `name` set to `entry` (or removed, for undefined), as the `mcp` section PATCH replaces. */
function withServer(servers: ServersOf, name: string, entry: McpServerEntry | undefined): Record<string, unknown> {
  const next: Record<string, McpServerEntry> = { ...servers };
  if (entry === undefined) delete next[name];
  else next[name] = entry;
  return { mcp: Object.keys(next).length === 0 ? null : { servers: next } };
}

export const mcpAdd: CliCommand = {
  options: [
    { name: "url", value: "URL", help: "a Streamable HTTP server instead of a command" },
    { name: "env-from", value: "VAR[=HOST_VAR],...", help: "environment variables the server gets from the host's (named here, never stored)" },
    { name: "header-from", value: "NAME=HOST_VAR,...", help: "HTTP headers whose values come from host variables" },
    { name: "cwd", value: "DIR", help: "the server's working directory: for a global server an absolute path outside any workspace (default: an empty directory of albedo's); for a project server relative to the workspace (default: the workspace)" },
    { name: "shared", help: "one process for every session that configures this exact entry" },
    { name: "replace", help: "replace an entry of that name instead of refusing" },
    ...SCOPE_OPTIONS, WORKSPACE_OPTION, JSON_OPTION,
  ],
  async run(args, io) {
    const name = serverName(args);
    const entry = entryFrom(args, args.positionals.slice(1));
    const scope = scopeOf(args);
    if (scope === "global" && "cwd" in entry && entry.cwd !== undefined && !isAbsolute(entry.cwd)) {
      throw new UsageError(`--cwd ${entry.cwd} must be an absolute path for a global server (it starts outside any workspace); give the workspace as '\${workspace}' in its arguments instead`);
    }
    const workspace = await workspaceOf(args, io);
    const daemon = await daemonFor(io, "albedo mcp add");
    const written = await patch(daemon, scope, workspace, (current) => {
      const servers = current.mcp?.servers ?? {};
      if (servers[name] !== undefined && !args.options.has("replace")) throw new CliFailure(`the ${scope} settings already have a server named ${name}; add --replace to replace it`);
      return withServer(servers, name, entry);
    });
    if (args.options.has("json")) {
      writeJson(io, { scope, file: written.file, revision: written.revision, name, entry });
      return 0;
    }
    const next = scope === "project" ? `; it starts once approved: albedo mcp approve ${name}` : "; sessions opened from now on start it (`/reload session` in an open one)";
    io.stdout.write(`albedo mcp add: ${name} (${visibleControls(launchText(entry))}) in ${written.file} (${scope})${next}\n`);
    return 0;
  },
};

export const mcpRemove: CliCommand = {
  options: [...SCOPE_OPTIONS, WORKSPACE_OPTION, JSON_OPTION],
  async run(args, io) {
    const name = serverName(args);
    if (args.positionals.length > 1) throw new UsageError("name one server");
    const scope = scopeOf(args);
    const workspace = await workspaceOf(args, io);
    const written = await patch(await daemonFor(io, "albedo mcp remove"), scope, workspace, (current) => {
      const servers = current.mcp?.servers ?? {};
      if (servers[name] === undefined) throw new CliFailure(`the ${scope} settings have no server named ${name}${Object.keys(servers).length ? ` (they have ${Object.keys(servers).join(", ")})` : ""}`);
      return withServer(servers, name, undefined);
    });
    if (scope === "project") await (await McpApprovals.load(stateDir(io.env), workspace)).revoke(name);
    if (args.options.has("json")) writeJson(io, { scope, file: written.file, revision: written.revision, name });
    else io.stdout.write(`albedo mcp remove: ${name} removed from ${written.file} (${scope})\n`);
    return 0;
  },
};

export const mcpApprove: CliCommand = {
  options: [{ name: "revoke", help: "withdraw the approval instead" }, WORKSPACE_OPTION, JSON_OPTION],
  async run(args, io) {
    const name = serverName(args);
    if (args.positionals.length > 1) throw new UsageError("name one server");
    const workspace = await workspaceOf(args, io);
    const approvals = await McpApprovals.load(stateDir(io.env), workspace);
    if (args.options.has("revoke")) {
      const had = await approvals.revoke(name);
      if (args.options.has("json")) writeJson(io, { name, revoked: had });
      else io.stdout.write(had ? `albedo mcp approve: approval of ${name} withdrawn; sessions opened from now on do not start it\n` : `albedo mcp approve: ${name} had no approval in ${workspace}\n`);
      return 0;
    }
    // The entry as the daemon reads it, so the approval is of exactly what sessions will start.
    const answer = await readAll(await daemonFor(io, "albedo mcp approve"), workspace);
    const entry = serversIn(answer, "project")[name];
    if (entry === undefined) {
      const global = serversIn(answer, "global")[name] !== undefined ? `; ${name} is in the global settings, which start as configured` : "";
      throw new CliFailure(`the project settings (${answer.project?.file ?? "none"}) have no server named ${name}${global}`);
    }
    const files = await approvals.approve(name, entry);
    if (args.options.has("json")) {
      writeJson(io, { name, workspace: approvals.workspace, entry, files });
      return 0;
    }
    const reads = secretVariables(entry);
    io.stdout.write([
      `albedo mcp approve: ${name} approved for ${approvals.workspace}:`,
      `  runs ${visibleControls(isStdioEntry(entry) ? [entry.command, ...(entry.args ?? [])].join(" ") : entry.url)}`,
      ...(reads.length > 0 ? [`  reads ${reads.join(", ")} from the environment`] : []),
      ...(files.length > 0 ? [`  binds the content of ${files.map((file) => visibleControls(file)).join(", ")}`] : []),
      "sessions opened from now on start it (`/reload session` in an open one), in a sandbox of its own while kernels are sandboxed; a change to the entry or to those files needs a new approval",
    ].join("\n") + "\n");
    return 0;
  },
};

/**
 * Starts the servers of `sections` once, as a session opened from this environment would (each
 * within its startup deadline, all in parallel), hands the hub to `use`, and stops them all.
 */
export async function withServersOnce<T>(env: NodeJS.ProcessEnv, sections: { global?: McpSection; project?: McpSection }, workspace: string, sandbox: SandboxMode | undefined, use: (hub: McpHub) => T): Promise<T> {
  const approvals = await McpApprovals.load(stateDir(env), workspace);
  const hub = new McpHub({ log: () => undefined });
  try {
    await hub.start(resolveServers({ ...oneOffMcpPlaces(env, workspace, sandbox), ...sections, workspace, approvals, env }));
    return use(hub);
  } finally {
    await hub.close();
  }
}

export const mcpPrompt: CliCommand = {
  options: [WORKSPACE_OPTION],
  async run(args, io) {
    if (args.positionals.length > 0) throw new UsageError("takes no arguments");
    const workspace = await workspaceOf(args, io);
    const answer = await readAll(await daemonFor(io, "albedo mcp prompt"), workspace);
    const global = answer.global.settings.mcp;
    const project = answer.project?.settings.mcp;
    if (Object.keys({ ...global?.servers, ...project?.servers }).length === 0) {
      io.stderr.write("albedo mcp prompt: no MCP servers configured, so a model gets no <mcp_servers> block and no word about MCP\n");
      return 0;
    }
    const block = await withServersOnce(io.env, { ...(global ? { global } : {}), ...(project ? { project } : {}) }, workspace, answer.global.settings.sandbox, (hub) =>
      renderMcpServers(hub.servers().filter((server) => server.status === "running").map((server) => ({ name: server.name, tools: hub.tools(server.name) }))),
    );
    // Printed as is: the block already shows control characters visibly and escapes markup, as the model gets it.
    io.stdout.write(block);
    return 0;
  },
};

/** The MCP commands this module contributes to the registry. */