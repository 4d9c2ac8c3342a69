import type { IncomingMessage } from "node:http";
import { isAbsolute } from "node:path";
import { decodeUtf8Strict, jsonNestingDepth } from "../json/index.js";
import { HttpProblem } from "./problem.js";
import { MAX_BODY_DEPTH, MAX_PATH_LENGTH, MAX_REQUEST_BODY_BYTES } from "./limits.js";

/** A JSON object from a request body, not yet checked field by field. */
export type JsonObject = Record<string, unknown>;

/**
 * Reads the body as JSON. Throws HttpProblem: 415 unless the content type is application/json,
 * 413 past MAX_REQUEST_BODY_BYTES, 400 invalid_body (with `offset`) when it is not well-formed
 * UTF-8, 400 invalid_json when it does not parse, 400 too_deep past MAX_BODY_DEPTH. An empty body
 * is `undefined`.
 */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > MAX_REQUEST_BODY_BYTES) throw tooLarge(declared);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BODY_BYTES) throw tooLarge(size);
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return undefined;
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") throw new HttpProblem("unsupported_media_type", `content-type must be application/json, got ${JSON.stringify(type || "nothing")}`);
  const decoded = decodeUtf8Strict(Buffer.concat(chunks));
  if (!decoded.ok) {
    // A lenient decode would store U+FFFD in place of the bytes; the client meant something else.
    throw new HttpProblem("invalid_body", `the body is not valid UTF-8: the sequence at byte ${decoded.offset} is ill-formed`, { offset: decoded.offset });
  }
  let value: unknown;
  try {
    value = JSON.parse(decoded.text) as unknown;
  } catch (error) {
    throw new HttpProblem("invalid_json", `the body is not valid JSON: ${(error as Error).message}`);
  }
  if (jsonNestingDepth(value, MAX_BODY_DEPTH) > MAX_BODY_DEPTH) {
    throw new HttpProblem("too_deep", `the body nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep; at most ${MAX_BODY_DEPTH} (MAX_BODY_DEPTH)`, {
      limit: MAX_BODY_DEPTH,
    });
  }
  return value;
}

function tooLarge(size: number): HttpProblem {
  return new HttpProblem("payload_too_large", `the body is ${size} bytes or more; at most ${MAX_REQUEST_BODY_BYTES} (MAX_REQUEST_BODY_BYTES)`, {
    limit: MAX_REQUEST_BODY_BYTES,
  });
}

/** Checks `value` is an object holding the required fields and no field outside `required` + `optional`. Throws 400 invalid_body. */
export function objectBody(value: unknown, required: readonly string[], optional: readonly string[], what = "the body"): JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalid(`${what} must be a JSON object`);
  const record = value as JsonObject;
  const allowed = [...required, ...optional];
  const stray = Object.keys(record).find((key) => !allowed.includes(key));
  if (stray !== undefined) throw invalid(`unknown field "${stray}" in ${what}; allowed: ${allowed.join(", ") || "none"}`, { field: stray });
  const missing = required.find((key) => record[key] === undefined);
  if (missing !== undefined) throw invalid(`${what} needs the field "${missing}"`, { field: missing });
  return record;
}

/** A string field of at most `maxBytes` bytes; undefined when absent and optional. Throws 400 invalid_body. */
export function stringField(record: JsonObject, key: string, maxBytes: number, what = "the body"): string | undefined {
  const value = record[key];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw invalid(`${what}: "${key}" must be a string`, { field: key });
  const size = Buffer.byteLength(value);
  if (size > maxBytes) throw invalid(`${what}: "${key}" is ${size} bytes; at most ${maxBytes}`, { field: key, limit: maxBytes });
  return value;
}

/** A list of strings; undefined when absent. Throws 400 invalid_body. */
export function stringListField(record: JsonObject, key: string, what: string): string[] | undefined {
  const value = record[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) throw invalid(`${what}: "${key}" must be a list of strings`, { field: key });
  return value as string[];
}

/** A boolean field; undefined when absent. Throws 400 invalid_body. */
export function booleanField(record: JsonObject, key: string, what: string): boolean | undefined {
  const value = record[key];
  if (value === undefined) return undefined;
  if (typeof value !== "boolean") throw invalid(`${what}: "${key}" must be true or false`, { field: key });
  return value;
}

/** An absolute path field (not checked on disk). Throws 400 invalid_body. */
export function absolutePathField(record: JsonObject, key: string, what = "the body"): string | undefined {
  const value = stringField(record, key, MAX_PATH_LENGTH, what);
  if (value !== undefined && (!isAbsolute(value) || value.includes("\0"))) throw invalid(`${what}: "${key}" must be an absolute path`, { field: key });
  return value;
}

/**
 * The revision an If-Match header names (quotes and a weak prefix removed). Throws 428
 * precondition_required when the header is missing or empty.
 */
export function ifMatchRevision(req: IncomingMessage): string {
  const raw = req.headers["if-match"];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim() ?? "";
  if (value.length === 0) throw new HttpProblem("precondition_required", "send the revision you last read in If-Match, e.g. If-Match: \"<revision>\"");
  return value.replace(/^W\//, "").replace(/^"(.*)"$/, "$1");
}

function invalid(detail: string, extra: Record<string, unknown> = {}): HttpProblem {
  return new HttpProblem("invalid_body", detail, extra);
}
