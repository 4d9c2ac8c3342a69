/**
 * From the `mcp` sections of the global and project files to the servers one session starts
 * (M-1): which entry stands for each name, which are approved, and each one's launch with its
 * secrets read from the host's environment. Reads nothing but `env`; never throws for settings.
 */
import type { ServerSandboxPlaces } from "../sandbox/index.js";
import { entryHash, type McpApprovals } from "./approvals.js";
import { projectCwd } from "./entryFiles.js";
import { hostLaunch, MCP_WORKSPACE_ENV } from "./hostLaunch.js";
import type { McpHostPlaces } from "./hostPlaces.js";
import { DEFAULT_MCP_CALL_TIMEOUT_MS, DEFAULT_MCP_STARTUP_TIMEOUT_MS, MAX_MCP_SERVERS } from "./limits.js";
import { isStdioEntry, type McpHttpEntry, type McpSection, type McpServerEntry, type McpStdioEntry, type McpToolFilter, type McpValue } from "./section.js";

export type McpOrigin = "global" | "project";

/**
 * The host variables a stdio server inherits, before its entry's own `env`. Never the runtime's
 * whole environment: the daemon's holds other servers' and the model's keys.
 */
export const MCP_BASE_ENV = ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"] as const;

export interface McpStdioLaunch {
  readonly kind: "stdio";
  /** Absolute for a global entry (found on a PATH without the kernel's places); as written for a project's, which runs in its sandbox. */
  readonly command: string;
  readonly args: readonly string[];
  /** Exactly the server's environment: MCP_BASE_ENV from the host, then the entry's env, then ALBEDO_WORKSPACE. */
  readonly env: Readonly<Record<string, string>>;
  /** A global entry's cwd, else a neutral directory; a project entry's cwd against the workspace, else the workspace. */
  readonly cwd: string;
  /** Set for a project's server while the session's kernel is sandboxed: the server runs in a sandbox of its own (sandboxServer). */
  readonly sandbox?: ServerSandboxPlaces;
  /** Asked before every start, restarts included: why the server may not start now (its approved files changed), or undefined. */
  readonly verify?: () => string | undefined;
}

export interface McpHttpLaunch {
  readonly kind: "http";
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

export type McpLaunch = McpStdioLaunch | McpHttpLaunch;

/** A server to start: its entry, that entry's hash (reload compares it), and everything resolved. */
export interface ResolvedServer {
  readonly name: string;
  readonly origin: McpOrigin;
  readonly entry: McpServerEntry;
  readonly hash: string;
  readonly launch: McpLaunch;
  /** Values never to show: those read through from_env, and every header value. */
  readonly secrets: readonly string[];
  readonly shared: boolean;
  readonly tools: McpToolFilter | undefined;
  readonly callTimeoutMs: number;
  readonly startupTimeoutMs: number;
}

/** A configured server that does not start: turned off (or awaiting approval), or unable to (a variable is unset). */
export interface InactiveServer {
  readonly name: string;
  readonly origin: McpOrigin;
  readonly hash: string;
  readonly status: "disabled" | "failed";
}

/** Something to tell the user about the configuration; `server` names the server it concerns. */
export interface McpDiagnostic {
  readonly server?: string;
  readonly message: string;
}

export interface ResolvedServers {
  readonly servers: readonly ResolvedServer[];
  readonly inactive: readonly InactiveServer[];
  readonly diagnostics: readonly McpDiagnostic[];
}

export interface ResolveInput extends McpHostPlaces {
  readonly global?: McpSection;
  readonly project?: McpSection;
  /** The session's workspace: project approvals are looked up for it. */
  readonly workspace: string;
  readonly approvals: McpApprovals;
  readonly env: NodeJS.ProcessEnv;
}

/** The servers of one session. A project entry stands only when approved; until then the global entry of that name (if any) runs. */
export function resolveServers(input: ResolveInput): ResolvedServers {
  const servers: ResolvedServer[] = [];
  const inactive: InactiveServer[] = [];
  const diagnostics: McpDiagnostic[] = [];
  if (input.approvals.problem) diagnostics.push({ message: input.approvals.problem });
  const names = [...new Set([...Object.keys(input.global?.servers ?? {}), ...Object.keys(input.project?.servers ?? {})])].sort();
  if (names.length > MAX_MCP_SERVERS) {
    diagnostics.push({ message: `${names.length} servers are configured; only the first ${MAX_MCP_SERVERS} by name are used (MAX_MCP_SERVERS): ${names.slice(MAX_MCP_SERVERS).join(", ")} left out` });
  }
  for (const name of names.slice(0, MAX_MCP_SERVERS)) {
    const chosen = chooseEntry(name, input, diagnostics);
    const hash = entryHash(chosen.entry);
    if (!chosen.approved) {
      inactive.push({ name, origin: chosen.origin, hash, status: "disabled" });
      continue;
    }
    if (chosen.entry.enabled === false || chosen.entry.disabled === true) {
      inactive.push({ name, origin: chosen.origin, hash, status: "disabled" });
      diagnostics.push({ server: name, message: `${name} is turned off in the ${chosen.origin} settings` });
      continue;
    }
    const launched = launchOf(name, chosen, input);
    if (typeof launched === "string") {
      inactive.push({ name, origin: chosen.origin, hash, status: "failed" });
      diagnostics.push({ server: name, message: launched });
      continue;
    }
    servers.push({ name, origin: chosen.origin, entry: chosen.entry, hash, ...launched, ...entryOptions(chosen.entry) });
  }
  return { servers, inactive, diagnostics };
}

interface Chosen {
  readonly entry: McpServerEntry;
  readonly origin: McpOrigin;
  /** False for a project entry nobody approved, which no global entry stands in for. */
  readonly approved: boolean;
}

/** The entry that stands for `name` (configured in at least one of the two sections). */
function chooseEntry(name: string, input: ResolveInput, diagnostics: McpDiagnostic[]): Chosen {
  const global = input.global?.servers?.[name];
  const project = input.project?.servers?.[name];
  if (project === undefined) return { entry: global!, origin: "global", approved: true };
  // The same entry in both files needs no approval: the global one would run anyway.
  if (global !== undefined && entryHash(global) === entryHash(project)) return { entry: global, origin: "global", approved: true };
  const check = input.approvals.check(name, project, input.workspace);
  if (check.approved) return { entry: project, origin: "project", approved: true };
  const how = `run \`albedo mcp approve ${name}\` in this workspace to start it`;
  if (global !== undefined) {
    diagnostics.push({ server: name, message: `the project settings configure ${name} differently and ${check.why}, so the global entry runs; ${how}` });
    return { entry: global, origin: "global", approved: true };
  }
  diagnostics.push({ server: name, message: `${name} comes from the project settings and ${check.why}; ${how}` });
  return { entry: project, origin: "project", approved: false };
}

function entryOptions(entry: McpServerEntry) {
  return {
    shared: entry.shared === true,
    tools: entry.tools,
    callTimeoutMs: entry.call_timeout_ms ?? DEFAULT_MCP_CALL_TIMEOUT_MS,
    startupTimeoutMs: entry.startup_timeout_ms ?? DEFAULT_MCP_STARTUP_TIMEOUT_MS,
  };
}

type Launched = { readonly launch: McpLaunch; readonly secrets: readonly string[] };

/** The launch of an entry with its secrets read, or why it cannot start (naming a variable or a path, never a value). */
function launchOf(name: string, chosen: Chosen, input: ResolveInput): Launched | string {
  const { entry } = chosen;
  return isStdioEntry(entry) ? stdioLaunch(name, entry, chosen.origin, input) : httpLaunch(name, entry, input.env);
}

function stdioLaunch(name: string, entry: McpStdioEntry, origin: McpOrigin, input: ResolveInput): Launched | string {
  const values = readValues(name, "env", entry.env, input.env, /\0/);
  if (typeof values === "string") return values;
  const env: Record<string, string> = {};
  for (const key of MCP_BASE_ENV) if (input.env[key] !== undefined) env[key] = input.env[key]!;
  Object.assign(env, values.values);
  const secrets = values.secrets;
  if (origin === "project") {
    const launch: McpStdioLaunch = {
      kind: "stdio", command: entry.command, args: [...(entry.args ?? [])], env: { ...env, [MCP_WORKSPACE_ENV]: input.workspace }, cwd: projectCwd(entry, input.workspace),
      ...(input.sandbox ? { sandbox: input.sandbox } : {}),
      verify: () => {
        const check = input.approvals.check(name, entry, input.workspace);
        return check.approved ? undefined : `${name} may not start: ${check.why}; run \`albedo mcp approve ${name}\` in this workspace`;
      },
    };
    return { launch, secrets };
  }
  const host = hostLaunch({ command: entry.command, args: entry.args ?? [], env, cwd: entry.cwd, workspace: input.workspace, neutralDir: input.neutralDir, writes: input.writes, shared: entry.shared === true });
  if (typeof host === "string") return `${name} cannot start: ${host}`;
  return { launch: { kind: "stdio", ...host }, secrets };
}

function httpLaunch(name: string, entry: McpHttpEntry, env: NodeJS.ProcessEnv): Launched | string {
  const values = readValues(name, "headers", entry.headers, env, /[\r\n\0]/);
  if (typeof values === "string") return values;
  return { launch: { kind: "http", url: entry.url, headers: values.values }, secrets: [...values.secrets, ...Object.values(values.values)] };
}

/** A map of values with each `from_env` read from `env`; the values read are the secrets. */
function readValues(name: string, field: string, map: Readonly<Record<string, McpValue>> | undefined, env: NodeJS.ProcessEnv, bad: RegExp) {
  const values: Record<string, string> = {};
  const secrets: string[] = [];
  for (const [key, value] of Object.entries(map ?? {})) {
    if (typeof value === "string") {
      values[key] = value;
      continue;
    }
    const read = env[value.from_env];
    if (read === undefined) return `${name} cannot start: environment variable ${value.from_env} (for ${field}.${key}) is not set`;
    if (bad.test(read)) return `${name} cannot start: environment variable ${value.from_env} (for ${field}.${key}) holds characters ${field} cannot carry`;
    values[key] = read;
    secrets.push(read);
  }
  return { values, secrets };
}
