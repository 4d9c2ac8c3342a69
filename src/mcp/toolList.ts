/**
 * A server's tools/list made into the tools albedo offers (M-2, M-5): names checked, the tool
 * filter applied, descriptions bounded, input schemas compiled once (ajv) so that calls are
 * checked before they are sent. What a server lists is data: a bad entry is a diagnostic.
 */
import { Ajv, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { visibleControls } from "../text/index.js";
import type { ToolPolicy } from "./glob.js";
import { MAX_MCP_ARGUMENT_ERRORS, MAX_MCP_DESCRIPTION_CHARS, MAX_MCP_SCHEMA_BYTES, MAX_MCP_SUMMARY_CHARS, MAX_MCP_TOOLS_PER_SERVER } from "./limits.js";
import { toolNameProblem, visibleToolName } from "./names.js";
import type { Redactor } from "./redact.js";

/** One tool as listed: the qualified name and a one-line description. */
export interface McpToolInfo {
  readonly name: string;
  readonly server: string;
  readonly tool: string;
  readonly description: string;
}

/** One tool in full: its description (bounded) and schemas as the server gave them. */
export interface McpToolDetail extends McpToolInfo {
  readonly full_description: string;
  readonly input_schema: Record<string, unknown>;
  readonly output_schema: Record<string, unknown> | undefined;
  /** Why calls of this tool are refused (its input schema does not compile), or undefined. */
  readonly problem: string | undefined;
}

/** A tool with its compiled argument check. */
export interface McpTool extends McpToolDetail {
  readonly validate: ValidateFunction | undefined;
}

export interface ToolList {
  readonly tools: ReadonlyMap<string, McpTool>;
  readonly diagnostics: readonly string[];
}

// One compiler per draft: servers write draft-07 or 2020-12 schemas. Formats are not checked
// (a format a server invents must not fail its schema), and nothing is logged to the console.
// Compilers are made per list, so a refreshed list leaves no compiled schema behind in a cache
// and two servers' `$id`s never collide.
const options = { strict: false, allErrors: true, validateFormats: false, logger: false } as const;

class Compilers {
  private draft7: Ajv | undefined;
  private draft2020: Ajv2020 | undefined;

  /** The compiled check of `schema`, or why it is not a schema. */
  compile(schema: Record<string, unknown>): ValidateFunction | string {
    const is2020 = typeof schema.$schema === "string" && schema.$schema.includes("2020-12");
    const ajv = is2020 ? (this.draft2020 ??= new Ajv2020(options)) : (this.draft7 ??= new Ajv(options));
    try {
      return ajv.compile(schema);
    } catch (error) {
      return `is not valid JSON Schema (${String((error as Error).message).slice(0, 200)})`;
    }
  }
}

/** The tools of `server` kept from `raw` (the tools arrays of every page), with a diagnostic per tool left out. */
export function readToolList(server: string, raw: readonly unknown[], policy: ToolPolicy, redactor: Redactor): ToolList {
  const tools = new Map<string, McpTool>();
  const diagnostics: string[] = [];
  const compilers = new Compilers();
  for (const item of raw) {
    const name = (item as { name?: unknown } | null)?.name;
    if (typeof name !== "string") {
      diagnostics.push("a listed tool has no name; left out");
      continue;
    }
    const problem = toolNameProblem(name);
    if (problem) {
      diagnostics.push(`tool "${visibleToolName(redactor.quote(name, 80))}" ${problem}; left out`);
      continue;
    }
    if (!policy.allows(name)) continue;
    if (tools.has(name)) {
      diagnostics.push(`tool ${name} is listed twice; the first is kept`);
      continue;
    }
    if (tools.size === MAX_MCP_TOOLS_PER_SERVER) {
      diagnostics.push(`the server lists more than ${MAX_MCP_TOOLS_PER_SERVER} tools (MAX_MCP_TOOLS_PER_SERVER); the rest are left out`);
      break;
    }
    const tool = readTool(server, name, item as Record<string, unknown>, redactor, compilers);
    if (tool.problem) diagnostics.push(`tool ${name}: ${tool.problem}`);
    tools.set(name, tool);
  }
  return { tools, diagnostics };
}

function readTool(server: string, tool: string, item: Record<string, unknown>, redactor: Redactor, compilers: Compilers): McpTool {
  const text = typeof item.description === "string" ? redactor.redact(item.description) : "";
  const full = text.length > MAX_MCP_DESCRIPTION_CHARS ? `${text.slice(0, MAX_MCP_DESCRIPTION_CHARS)}…` : text;
  const input = schemaOf(item.inputSchema);
  const output = item.outputSchema === undefined ? undefined : schemaOf(item.outputSchema);
  const compiled = typeof input === "string" ? input : compilers.compile(input);
  const problem = typeof compiled === "string" ? `its input schema ${compiled}; calls of it are refused` : undefined;
  return {
    name: `${server}.${tool}`,
    server,
    tool,
    description: summary(full),
    full_description: visibleControls(full.replace(/\r\n?/g, "\n")),
    input_schema: typeof input === "string" ? {} : input,
    output_schema: typeof output === "object" ? output : undefined,
    problem,
    validate: typeof compiled === "string" ? undefined : compiled,
  };
}

/** The first non-empty line, controls made visible, cut to MAX_MCP_SUMMARY_CHARS. */
function summary(text: string): string {
  const line = visibleControls(text.split(/\r?\n/).find((item) => item.trim() !== "")?.trim() ?? "");
  return line.length <= MAX_MCP_SUMMARY_CHARS ? line : `${line.slice(0, MAX_MCP_SUMMARY_CHARS - 1)}…`;
}

function schemaOf(value: unknown): Record<string, unknown> | string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "is not a JSON object";
  if (Buffer.byteLength(JSON.stringify(value)) > MAX_MCP_SCHEMA_BYTES) return `is over ${MAX_MCP_SCHEMA_BYTES} bytes (MAX_MCP_SCHEMA_BYTES)`;
  return value as Record<string, unknown>;
}

/** The argument errors of a failed check, one per JSON path: `/query: must be string`. */
export function argumentErrors(validate: ValidateFunction): string {
  const errors = validate.errors ?? [];
  const lines = errors.slice(0, MAX_MCP_ARGUMENT_ERRORS).map((error) => `${error.instancePath === "" ? "/" : error.instancePath}: ${error.message ?? "is not valid"}`);
  if (errors.length > MAX_MCP_ARGUMENT_ERRORS) lines.push(`and ${errors.length - MAX_MCP_ARGUMENT_ERRORS} more`);
  return lines.join("; ");
}
