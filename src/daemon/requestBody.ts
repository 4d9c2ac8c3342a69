import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import { decodeUtf8Strict, isWellFormedJson, jsonNestingDepth, problemsOfIssues } from "../json/index.js";
import { HttpProblem } from "./problem.js";
import { MAX_REQUEST_BODY_BYTES } from "../api/index.js";
import { MAX_BODY_DEPTH } from "./limits.js";

/** The most bytes a body may have, and the constant that says so (named in the 413). */
export interface BodyLimit {
  readonly bytes: number;
  readonly name: string;
}

const REQUEST_BODY_LIMIT: BodyLimit = { bytes: MAX_REQUEST_BODY_BYTES, name: "MAX_REQUEST_BODY_BYTES" };

/**
 * Reads the body as JSON. Throws HttpProblem: 415 unless the content type is application/json,
 * 413 past `limit` (MAX_REQUEST_BODY_BYTES unless the route says), 400 invalid_body (with `offset`) when it is not well-formed
 * UTF-8, 400 invalid_json when it does not parse, 400 too_deep past MAX_BODY_DEPTH, 400
 * invalid_body when a string escapes a lone surrogate ("\ud800", which has no UTF-8 form). An empty body
 * is `undefined`. Shape is the route's schema's business (parseInput).
 */
export async function readJsonBody(req: IncomingMessage, limit: BodyLimit = REQUEST_BODY_LIMIT): Promise<unknown> {
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > limit.bytes) throw tooLarge(declared, limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit.bytes) throw tooLarge(size, limit);
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
  // Stored, it would be served back as JSON that strict parsers refuse; as with ill-formed bytes, the client meant something else.
  if (!isWellFormedJson(value)) throw new HttpProblem("invalid_body", "the body escapes a lone surrogate (such as \\ud800), which no UTF-8 text can hold; send well-formed text");
  return value;
}

function tooLarge(size: number, limit: BodyLimit): HttpProblem {
  return new HttpProblem("payload_too_large", `the body is ${size} bytes or more; at most ${limit.bytes} (${limit.name})`, { limit: limit.bytes });
}

/**
 * `value` (a body, or a query string as an object) parsed with `schema`. Throws 400 invalid_body
 * or invalid_query whose `field` names the first place at fault (`skills.on[2]`) and whose
 * `problems` lists every one.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, where: "body" | "query"): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = problemsOfIssues(parsed.error.issues);
  const first = problems[0]!;
  const detail = `${first.path === "" ? `the ${where}` : first.path}: ${first.message}${problems.length > 1 ? ` (and ${problems.length - 1} more problems)` : ""}`;
  throw new HttpProblem(where === "body" ? "invalid_body" : "invalid_query", detail, { ...(first.path === "" ? {} : { field: first.path }), problems });
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
