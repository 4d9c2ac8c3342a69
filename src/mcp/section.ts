/**
 * The `mcp` settings section (M-1). It lives here, beside the client, so that the settings schema
 * can validate it without this domain importing settings. An entry is the `mcpServers` shape other
 * clients write (command/args/env, or url/headers); the few keys they add that albedo can ignore
 * safely are accepted, every other unknown key is refused.
 */
import { z } from "zod";
import {
  MAX_MCP_ARG_LENGTH, MAX_MCP_ARGS, MAX_MCP_CALL_TIMEOUT_MS, MAX_MCP_COMMAND_LENGTH, MAX_MCP_ENV_NAME_LENGTH,
  MAX_MCP_ENV_VALUE_LENGTH, MAX_MCP_ENV_VARS, MAX_MCP_GLOB_LENGTH, MAX_MCP_GLOBS, MAX_MCP_HEADER_VALUE_LENGTH,
  MAX_MCP_HEADERS, MAX_MCP_SERVERS, MAX_MCP_STARTUP_TIMEOUT_MS, MAX_MCP_URL_LENGTH, MIN_MCP_TIMEOUT_MS,
} from "./limits.js";
import { serverNameProblem } from "./names.js";

/** A value read from the host's environment when the server starts; the value itself is never a setting. */
export interface McpSecretRef {
  readonly from_env: string;
}
export type McpValue = string | McpSecretRef;

export interface McpToolFilter {
  readonly allow?: readonly string[];
  readonly deny?: readonly string[];
}

/** Keys every entry may carry. `type`, `disabled`, `autoApprove` and `alwaysAllow` are other clients' keys (see docs/mcp.md). */
interface McpCommonEntry {
  readonly enabled?: boolean;
  readonly shared?: boolean;
  readonly tools?: McpToolFilter;
  readonly call_timeout_ms?: number;
  readonly startup_timeout_ms?: number;
  readonly type?: string;
  readonly disabled?: boolean;
  readonly autoApprove?: readonly string[];
  readonly alwaysAllow?: readonly string[];
}

export interface McpStdioEntry extends McpCommonEntry {
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, McpValue>>;
  readonly cwd?: string;
}

export interface McpHttpEntry extends McpCommonEntry {
  readonly url: string;
  readonly headers?: Readonly<Record<string, McpValue>>;
}

export type McpServerEntry = McpStdioEntry | McpHttpEntry;

export interface McpSection {
  readonly servers?: Readonly<Record<string, McpServerEntry>>;
}

/** The host variables `entry` reads through `from_env` (names only: their values are secrets). */
export function secretVariables(entry: McpServerEntry): string[] {
  const values: Readonly<Record<string, McpValue>> = ("command" in entry ? entry.env : entry.headers) ?? {};
  return Object.values(values).flatMap((value) => (typeof value === "string" ? [] : [value.from_env]));
}

/** True when `entry` starts a process (it has `command`), false when it names a URL. */
export function isStdioEntry(entry: McpServerEntry): entry is McpStdioEntry {
  return "command" in entry;
}

/** `type` values other clients write for each transport. */
const STDIO_TYPES = ["stdio"] as const;
const HTTP_TYPES = ["http", "streamable-http", "streamableHttp"] as const;
/** Headers the transport sets itself; a setting must not replace them. */
const RESERVED_HEADERS = new Set(["host", "content-length", "content-type", "accept", "connection", "transfer-encoding", "mcp-session-id", "mcp-protocol-version", "last-event-id"]);
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const fail = (message: string) => ({ error: () => message });

function text(max: number, what = "a non-empty string") {
  const message = `must be ${what} of at most ${max} characters`;
  return z.string(fail(message)).min(1, fail(message)).max(max, fail(message)).refine((value) => !value.includes("\0"), fail("must not contain NUL"));
}

function timeout(max: number) {
  const message = `must be an integer from ${MIN_MCP_TIMEOUT_MS} to ${max} (milliseconds)`;
  return z.number(fail(message)).int(fail(message)).min(MIN_MCP_TIMEOUT_MS, fail(message)).max(max, fail(message));
}

const notEnvName = `must name an environment variable (letters, digits and _, not starting with a digit, at most ${MAX_MCP_ENV_NAME_LENGTH} characters)`;
const SecretRef = z.strictObject(
  { from_env: z.string(fail(notEnvName)).max(MAX_MCP_ENV_NAME_LENGTH, fail(notEnvName)).regex(ENV_NAME, fail(notEnvName)) },
  { error: (issue) => (issue.code === "unrecognized_keys" ? "unknown field; a secret reference holds only from_env" : "must be a string or {\"from_env\": \"VARIABLE\"}") },
);

/** A map of names to values or secret references, its keys checked by `keyProblem`. */
function valueMap(what: string, max: number, maxValue: number, keyProblem: (key: string) => string | undefined, valueRule: RegExp, valueRuleText: string) {
  const literal = z.string().max(maxValue, fail(`must be at most ${maxValue} characters`)).refine((value) => !valueRule.test(value), fail(valueRuleText));
  const value = z.union([literal, SecretRef], {
    error: (issue) => (typeof issue.input === "string" ? `must be at most ${maxValue} characters and ${valueRuleText.replace(/^must /, "")}` : "must be a string or {\"from_env\": \"VARIABLE\"}"),
  });
  return z.record(z.string(), value, fail(`must be an object of ${what}`)).superRefine((map, ctx) => {
    const keys = Object.keys(map);
    if (keys.length > max) ctx.addIssue({ code: "custom", message: `has ${keys.length} entries; at most ${max} are allowed` });
    for (const key of keys) {
      const problem = keyProblem(key);
      if (problem) ctx.addIssue({ code: "custom", path: [key], message: problem });
    }
  });
}

function envKeyProblem(key: string): string | undefined {
  return ENV_NAME.test(key) && key.length <= MAX_MCP_ENV_NAME_LENGTH ? undefined : notEnvName;
}

function headerKeyProblem(key: string): string | undefined {
  if (!HEADER_NAME.test(key)) return "is not an HTTP header name";
  return RESERVED_HEADERS.has(key.toLowerCase()) ? "is set by the transport itself and cannot be configured" : undefined;
}

const globs = z
  .array(text(MAX_MCP_GLOB_LENGTH, "a non-empty glob pattern"), fail("must be a list of glob patterns"))
  .max(MAX_MCP_GLOBS, fail(`must hold at most ${MAX_MCP_GLOBS} patterns`));

const ToolFilter = z.strictObject({ allow: globs.optional(), deny: globs.optional() }, {
  error: (issue) => (issue.code === "unrecognized_keys" ? "unknown field; tools allows allow, deny" : "must be an object with allow and/or deny"),
});

const ignoredList = z.array(z.string(), fail("must be a list of strings")).max(MAX_MCP_GLOBS, fail(`must hold at most ${MAX_MCP_GLOBS} names`));

function common(types: readonly [string, ...string[]]) {
  return {
    enabled: z.boolean(fail("must be true or false")).optional(),
    shared: z.boolean(fail("must be true or false")).optional(),
    tools: ToolFilter.optional(),
    call_timeout_ms: timeout(MAX_MCP_CALL_TIMEOUT_MS).optional(),
    startup_timeout_ms: timeout(MAX_MCP_STARTUP_TIMEOUT_MS).optional(),
    type: z.enum(types, fail(`must be ${types.map((item) => `"${item}"`).join(" or ")} for this entry`)).optional(),
    disabled: z.boolean(fail("must be true or false")).optional(),
    autoApprove: ignoredList.optional(),
    alwaysAllow: ignoredList.optional(),
  };
}

function entryObject<S extends z.ZodRawShape>(kind: string, shape: S) {
  const allowed = Object.keys(shape).join(", ");
  return z.strictObject(shape, { error: (issue) => (issue.code === "unrecognized_keys" ? `unknown field; a ${kind} server entry allows ${allowed}` : "must be an object") });
}

const StdioEntry = entryObject("stdio", {
  command: text(MAX_MCP_COMMAND_LENGTH),
  args: z.array(z.string().max(MAX_MCP_ARG_LENGTH).refine((arg) => !arg.includes("\0")), fail(`must be a list of strings (each at most ${MAX_MCP_ARG_LENGTH} characters, no NUL)`))
    .max(MAX_MCP_ARGS, fail(`must hold at most ${MAX_MCP_ARGS} arguments`))
    .optional(),
  env: valueMap("environment variables", MAX_MCP_ENV_VARS, MAX_MCP_ENV_VALUE_LENGTH, envKeyProblem, /\0/, "must not contain NUL").optional(),
  cwd: text(MAX_MCP_COMMAND_LENGTH, "a directory path").optional(),
  ...common(STDIO_TYPES),
});

const HttpEntry = entryObject("Streamable HTTP", {
  url: text(MAX_MCP_URL_LENGTH, "an http or https URL").superRefine((url, ctx) => {
    const problem = urlProblem(url);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  }),
  headers: valueMap("HTTP headers", MAX_MCP_HEADERS, MAX_MCP_HEADER_VALUE_LENGTH, headerKeyProblem, /[\r\n\0]/, "must not contain CR, LF or NUL").optional(),
  ...common(HTTP_TYPES),
});

/** Why `url` cannot be a server's URL, or undefined. Credentials in it would be a secret stored in settings. */
function urlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "must be an absolute http or https URL";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return `must be an http or https URL, not ${parsed.protocol}`;
  if (parsed.username !== "" || parsed.password !== "") return "must not carry a user name or password; put credentials in headers with from_env";
  if (parsed.hash !== "") return "must not have a fragment";
  return undefined;
}

/** One entry: its keys decide which shape it must have; the issues of that shape are placed where they arose. */
const ServerEntry = z.custom<McpServerEntry>().superRefine((input, ctx) => {
  const value: unknown = input;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    ctx.addIssue({ code: "custom", message: "must be an object with command (a stdio server) or url (a Streamable HTTP server)" });
    return;
  }
  const shape = entryShape(value as Record<string, unknown>);
  if (typeof shape === "string") {
    ctx.addIssue({ code: "custom", message: shape });
    return;
  }
  const parsed = shape.safeParse(value);
  if (!parsed.success) {
    // Re-raised as custom issues, so a stray key's name moves into the path as problemsOfIssues would put it.
    for (const issue of parsed.error.issues) {
      const paths = issue.code === "unrecognized_keys" ? issue.keys.map((key) => [...issue.path, key]) : [issue.path];
      for (const path of paths) ctx.addIssue({ code: "custom", path, message: issue.message });
    }
    return;
  }
  const { enabled, disabled } = parsed.data as McpCommonEntry;
  if (enabled !== undefined && disabled !== undefined && enabled === disabled) {
    ctx.addIssue({ code: "custom", path: ["disabled"], message: "contradicts enabled; keep one of them" });
  }
});

function entryShape(value: Record<string, unknown>): typeof StdioEntry | typeof HttpEntry | string {
  if (value.type === "sse") return "the SSE transport is not supported; albedo speaks stdio and Streamable HTTP (type \"http\")";
  const hasCommand = "command" in value;
  const hasUrl = "url" in value;
  if (hasCommand && hasUrl) return "must have either command (a stdio server) or url (a Streamable HTTP server), not both";
  if (hasCommand) return StdioEntry;
  if (hasUrl) return HttpEntry;
  return "must have command (a stdio server) or url (a Streamable HTTP server)";
}

/** The `mcp` section of a settings file (M-1): strict, its messages naming the field path. */
export const McpSection = z.strictObject(
  { servers: z.record(z.string(), ServerEntry, fail("must be an object of server entries by name")).superRefine(serverNames).optional() },
  { error: (issue) => (issue.code === "unrecognized_keys" ? "unknown field; mcp allows servers" : "must be an object") },
);

function serverNames(servers: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const names = Object.keys(servers);
  if (names.length > MAX_MCP_SERVERS) ctx.addIssue({ code: "custom", message: `configures ${names.length} servers; at most ${MAX_MCP_SERVERS} (MAX_MCP_SERVERS)` });
  for (const name of names) {
    const problem = serverNameProblem(name);
    if (problem) ctx.addIssue({ code: "custom", path: [name], message: problem });
  }
}
