/**
 * Every method a session serves its kernel (K-5), declared once: the dispatcher checks each call's
 * params against its schema, the handlers in rpcMethods.ts are bound to these declarations, and the
 * kernel package's copy (names, parameters, defaults, docstrings) is generated from them
 * (pythonContract.ts). `commands.slash` and `commands.complete` serve a person typing `/name args`
 * in a notebook: the runtime parses, runs and renders the line, so the kernel keeps no copy of that.
 */
import { z } from "zod";
import type { CommandDeclaration } from "../commands/index.js";
import { answers, type RpcMethod } from "../rpc/index.js";
import { DEFAULT_READ_LIMIT, SKILL_FILE, type ReadResult, type ResourceListing } from "../skills/index.js";
import { MAX_MCP_CALL_TIMEOUT_MS, MAX_MCP_LINK_TEXT_CHARS, type McpCallResult, type McpReadResult, type McpServerStatus, type McpToolDetail, type McpToolInfo } from "../mcp/index.js";

/** Reload can walk up to MAX_CANDIDATES skill trees; it gets longer than an ordinary call. */
export const RELOAD_ROUTE_TIMEOUT_MS = 60_000;

const SkillName = z.string().min(1, "must be a non-empty skill name");
const Offset = z.number().int().min(0);
const SlashLine = z.string().min(1, "must be a non-empty line");

/** One catalog entry as `skills.list` answers it. */
export interface SkillListing {
  readonly name: string;
  readonly description: string;
  readonly source: string;
  readonly command: string;
}

/** What `commands.slash` answers: the command the line ran, its value and the text a person reads. */
export interface SlashAnswer {
  readonly command: string;
  readonly submits_turn: boolean;
  readonly value: unknown;
  readonly text: string;
}

export const SKILL_METHODS = {
  list: {
    name: "skills.list",
    summary: "The catalog entries of the session's snapshot: name, description, source and slash command of each skill.",
    params: z.object({}).strict(),
    result: answers<{ readonly revision: string; readonly skills: readonly SkillListing[] }>(),
  },
  read: {
    name: "skills.read",
    summary: "One byte range of a skill's resource: {content, encoding, size, offset, next_offset, truncated}.",
    params: z.object({ name: SkillName, resource: z.string().default(SKILL_FILE), offset: Offset.default(0), limit: Offset.default(DEFAULT_READ_LIMIT) }).strict(),
    result: answers<ReadResult>(),
  },
  resources: {
    name: "skills.resources",
    summary: "The relative paths of a skill's resources, with the diagnostics of the walk.",
    params: z.object({ name: SkillName }).strict(),
    result: answers<ResourceListing>(),
  },
} as const satisfies Record<string, RpcMethod>;

export const COMMAND_METHODS = {
  catalog: {
    name: "commands.catalog",
    summary: "Every command of the current snapshot with its argument details.",
    params: z.object({}).strict(),
    result: answers<{ readonly revision: string; readonly commands: readonly CommandDeclaration[] }>(),
  },
  invoke: {
    name: "commands.invoke",
    summary: "Runs a command by slash name with raw argument text or a dict of named arguments; a skill's activation comes back as an Activation (a dict).",
    params: z.object({ name: z.string().min(1, "must be a non-empty command name"), arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).default("") }).strict(),
    timeoutMs: RELOAD_ROUTE_TIMEOUT_MS,
    result: answers<unknown>(),
  },
  slash: {
    name: "commands.slash",
    summary: "Runs one slash line as a person typed it and answers with the text to show.",
    params: z.object({ line: SlashLine }).strict(),
    timeoutMs: RELOAD_ROUTE_TIMEOUT_MS,
    result: answers<SlashAnswer>(),
  },
  complete: {
    name: "commands.complete",
    summary: "The completions of a partly typed slash line.",
    params: z.object({ line: SlashLine }).strict(),
    result: answers<{ readonly matches: readonly string[] }>(),
  },
} as const satisfies Record<string, RpcMethod>;

/**
 * How long `mcp.catalog` waits for servers still starting before it answers without their tools:
 * the kernel makes its typed methods from that answer while it loads, so a slow server must not
 * hold the kernel's start for its whole startup deadline (its tools are made on first use).
 */
export const MCP_CATALOG_WAIT_MS = 5_000;
/** The `mcp.call` route outlasts the longest deadline a server entry may set: the server's own deadline answers first. */
export const MCP_CALL_ROUTE_TIMEOUT_MS = MAX_MCP_CALL_TIMEOUT_MS + 1_000;

const QualifiedTool = z.string().regex(/^[^.]+\.[\s\S]+$/, "must be a qualified tool name, server.tool");

/** One server's tools as the kernel makes its typed methods from them. */
export interface McpCatalogServer {
  readonly name: string;
  readonly status: McpServerStatus["status"];
  readonly tools: readonly { readonly tool: string; readonly description: string; readonly input_schema?: unknown }[];
}

export const MCP_METHODS = {
  servers: {
    name: "mcp.servers",
    summary: "The session's MCP servers: name, status, tool count and diagnostics of each.",
    params: z.object({}).strict(),
    result: answers<{ readonly servers: readonly McpServerStatus[] }>(),
  },
  tools: {
    name: "mcp.tools",
    summary: "The tools of every running server, or of one: qualified name server.tool and a one-line description.",
    params: z.object({ server: z.string().min(1, "must be a server name").optional() }).strict(),
    result: answers<{ readonly tools: readonly McpToolInfo[] }>(),
  },
  describe: {
    name: "mcp.describe",
    summary: "One tool's description and its input and output JSON schemas, by qualified name server.tool.",
    params: z.object({ name: QualifiedTool }).strict(),
    result: answers<McpToolDetail>(),
  },
  call: {
    name: "mcp.call",
    summary: "Calls a tool by qualified name with a dict of arguments, checked against its input schema; the result is the tool's structured content, else its text, with its images.",
    params: z.object({ name: QualifiedTool, arguments: z.record(z.string(), z.unknown()).optional() }).strict(),
    timeoutMs: MCP_CALL_ROUTE_TIMEOUT_MS,
    result: answers<McpCallResult>(),
  },
  read: {
    name: "mcp.read",
    summary: "Reads a resource a tool linked to, by its uri, from the server whose tool gave the link (or the one named); the answer is bounded like a call's.",
    params: z.object({ uri: z.string().min(1, "must be a resource uri").max(MAX_MCP_LINK_TEXT_CHARS, `must be at most ${MAX_MCP_LINK_TEXT_CHARS} characters`), server: z.string().min(1, "must be a server name").optional() }).strict(),
    timeoutMs: MCP_CALL_ROUTE_TIMEOUT_MS,
    result: answers<McpReadResult>(),
  },
  catalog: {
    name: "mcp.catalog",
    summary: "Every configured server (or one) with the input schemas of its tools, for the kernel's typed methods.",
    params: z.object({ server: z.string().min(1, "must be a server name").optional() }).strict(),
    result: answers<{ readonly servers: readonly McpCatalogServer[] }>(),
  },
} as const satisfies Record<string, RpcMethod>;

/**
 * Runtime -> kernel notification after a reload that added MCP servers (M-3), with `servers`
 * (every server the session now has) and `deadline_ms` (the per-call deadline its routes now
 * need). A kernel without an `mcp` namespace gets one; either way a server it has no object for
 * is reached through `mcp.call`, since typed methods are made when the kernel starts (C-4).
 */
export const MCP_RELOADED_NOTIFICATION = "albedo/mcp";

/**
 * Runtime -> kernel notification while a cell's `mcp.call` runs and its server reports progress
 * (M-5): `{cell, name, progress, total?, message?}`, at most one per MCP_PROGRESS_INTERVAL_MS for
 * one call. The kernel shows it as a line on that cell's stderr.
 */
export const MCP_PROGRESS_NOTIFICATION = "albedo/mcp_progress";
/** The shortest time between two progress notifications of one call; the ones in between are dropped. */
export const MCP_PROGRESS_INTERVAL_MS = 1_000;

/** Every declared method, for the generated kernel contract and the docs; the handlers live in rpcMethods.ts. */
export const SESSION_METHODS: readonly RpcMethod[] = [...Object.values(SKILL_METHODS), ...Object.values(COMMAND_METHODS), ...Object.values(MCP_METHODS)];
