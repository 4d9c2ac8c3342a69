/**
 * A tools/call result made into what the kernel gets (M-3, M-5): structuredContent when present,
 * else the text parts; images apart; bounded by MCP_MAX_RESULT_BYTES and MAX_MCP_RESULT_DEPTH;
 * every string redacted. An isError result is returned, not thrown: the RPC layer raises it.
 */
import { AppError } from "../errors/index.js";
import { MAX_MCP_LINK_TEXT_CHARS, MAX_MCP_LINKS_PER_RESULT, MAX_MCP_QUOTE_CHARS, MAX_MCP_RESULT_DEPTH, MCP_MAX_RESULT_BYTES } from "./limits.js";
import type { Redactor } from "./redact.js";

export interface McpImage {
  readonly mime: string;
  /** Base64, as the server sent it. */
  readonly data: string;
}

/** A server's `notifications/progress` for a call in flight: its message bounded (MAX_MCP_PROGRESS_MESSAGE_CHARS) and redacted. */
export interface McpProgress {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** A `resource_link` a tool returned (M-6): read with `mcp.read(uri)` from the server that gave it. */
export interface McpLink {
  readonly server: string;
  readonly uri: string;
  readonly name?: string;
  readonly description?: string;
  readonly mime?: string;
}

export interface McpCallResult {
  /** structuredContent, else the text (a string, or a list for several text parts), else null. */
  readonly value: unknown;
  readonly images: readonly McpImage[];
  /** The result's resource links, at most MAX_MCP_LINKS_PER_RESULT. */
  readonly links: readonly McpLink[];
  readonly is_error: boolean;
  /** The server's text of an isError result, bounded and redacted. */
  readonly error_text?: string;
  /** JSON bytes of the result as received. */
  readonly bytes: number;
  readonly ms: number;
}

interface ContentPart {
  readonly type?: unknown;
  readonly text?: unknown;
  readonly data?: unknown;
  readonly mimeType?: unknown;
  readonly resource?: { readonly text?: unknown };
  readonly uri?: unknown;
  readonly name?: unknown;
  readonly description?: unknown;
}

/** The result of `qualified` from `raw`; throws AppError limit_exceeded when it is over a bound. */
export function callResult(qualified: string, raw: Record<string, unknown>, ms: number, redactor: Redactor): McpCallResult {
  if (deeperThan(raw, MAX_MCP_RESULT_DEPTH)) {
    throw new AppError("limit_exceeded", `the result of ${qualified} nests deeper than ${MAX_MCP_RESULT_DEPTH} levels (MAX_MCP_RESULT_DEPTH)`);
  }
  const bytes = Buffer.byteLength(JSON.stringify(raw));
  if (bytes > MCP_MAX_RESULT_BYTES) {
    throw new AppError("limit_exceeded", `the result of ${qualified} is ${bytes} bytes; at most ${MCP_MAX_RESULT_BYTES} (MCP_MAX_RESULT_BYTES)`, { bytes, limit: MCP_MAX_RESULT_BYTES });
  }
  const parts = Array.isArray(raw.content) ? (raw.content as ContentPart[]) : [];
  const texts = parts.flatMap(textOf).map((text) => redactor.redact(text));
  const images = parts.filter((part) => part.type === "image" && typeof part.data === "string" && typeof part.mimeType === "string")
    .map((part) => ({ mime: part.mimeType as string, data: part.data as string }));
  const server = qualified.slice(0, qualified.indexOf("."));
  const links = parts.filter((part) => part.type === "resource_link" && typeof part.uri === "string").slice(0, MAX_MCP_LINKS_PER_RESULT).map((part) => linkOf(server, part, redactor));
  const isError = raw.isError === true;
  const structured = raw.structuredContent;
  const value = structured !== undefined && structured !== null ? redactor.redactValue(structured) : texts.length === 0 ? null : texts.length === 1 ? texts[0] : texts;
  const result: McpCallResult = { value, images, links, is_error: isError, bytes, ms };
  return isError ? { ...result, error_text: redactor.quote(texts.join("\n") || "the tool reported an error without text", MAX_MCP_QUOTE_CHARS * 4) } : result;
}

function linkOf(server: string, part: ContentPart, redactor: Redactor): McpLink {
  const text = (value: unknown) => (typeof value === "string" ? redactor.redact(value).slice(0, MAX_MCP_LINK_TEXT_CHARS) : undefined);
  const name = text(part.name);
  const description = text(part.description);
  const mime = text(part.mimeType);
  return { server, uri: text(part.uri)!, ...(name === undefined ? {} : { name }), ...(description === undefined ? {} : { description }), ...(mime === undefined ? {} : { mime }) };
}

function textOf(part: ContentPart): string[] {
  if (part.type === "text" && typeof part.text === "string") return [part.text];
  if (part.type === "resource" && typeof part.resource?.text === "string") return [part.resource.text];
  return [];
}

/** Whether `value` nests deeper than `max`; iterative, so a hostile depth cannot overflow the stack. */
export function deeperThan(value: unknown, max: number): boolean {
  const stack: { readonly item: unknown; readonly depth: number }[] = [{ item: value, depth: 0 }];
  while (stack.length > 0) {
    const { item, depth } = stack.pop()!;
    if (typeof item !== "object" || item === null) continue;
    if (depth >= max) return true;
    for (const child of Object.values(item)) stack.push({ item: child, depth: depth + 1 });
  }
  return false;
}

/** One part of a read resource: its text, or its bytes as base64. */
export interface McpResourcePart {
  readonly uri: string;
  readonly mime?: string;
  readonly text?: string;
  readonly data?: string;
}

/** A resources/read answer as the kernel gets it (M-6). */
export interface McpReadResult {
  readonly contents: readonly McpResourcePart[];
  readonly bytes: number;
}

/** The contents of a resources/read answer about `where`; throws AppError limit_exceeded past the result bounds. */
export function readResult(where: string, raw: Record<string, unknown>, redactor: Redactor): McpReadResult {
  if (deeperThan(raw, MAX_MCP_RESULT_DEPTH)) throw new AppError("limit_exceeded", `the read of ${where} nests deeper than ${MAX_MCP_RESULT_DEPTH} levels (MAX_MCP_RESULT_DEPTH)`);
  const bytes = Buffer.byteLength(JSON.stringify(raw));
  if (bytes > MCP_MAX_RESULT_BYTES) {
    throw new AppError("limit_exceeded", `the read of ${where} is ${bytes} bytes; at most ${MCP_MAX_RESULT_BYTES} (MCP_MAX_RESULT_BYTES)`, { bytes, limit: MCP_MAX_RESULT_BYTES });
  }
  const parts = Array.isArray(raw.contents) ? (raw.contents as Record<string, unknown>[]) : [];
  const contents = parts.filter((part) => typeof part === "object" && part !== null && typeof part.uri === "string").map((part): McpResourcePart => {
    const mime = typeof part.mimeType === "string" ? { mime: part.mimeType.slice(0, MAX_MCP_LINK_TEXT_CHARS) } : {};
    if (typeof part.text === "string") return { uri: part.uri as string, ...mime, text: redactor.redact(part.text) };
    return { uri: part.uri as string, ...mime, ...(typeof part.blob === "string" ? { data: part.blob } : {}) };
  });
  return { contents, bytes };
}
