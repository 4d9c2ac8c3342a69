import { STATUS_CODES, type ServerResponse } from "node:http";
import type { AdmissionErrorCode } from "../operations/index.js";
import { isAppError, type AppErrorCode } from "../errors/index.js";
import { SettingsFileError } from "../settings/index.js";
import { SandboxUnavailableError } from "../sandbox/index.js";
import { KernelSpecError, KernelStartError, RemoteKernelError, RemoteSettingsError } from "../kernel/index.js";
import { PythonUnavailableError } from "../python/index.js";
import type { ProblemDocument } from "./resources.js";
import { STORAGE_BUSY_RETRY_AFTER_S } from "./limits.js";
import { storageDetail, storageFault } from "./storage.js";

/** Media type of every error body (RFC 9457). */
export const PROBLEM_CONTENT_TYPE = "application/problem+json";
/** Prefix of a problem's `type`; the stable `code` follows it. */
export const PROBLEM_TYPE_PREFIX = "urn:albedo:problem:";

/** Every code the daemon answers with, its HTTP status and its title: the one place a code meets a status. */
export const PROBLEMS = {
  bad_request: { status: 400, title: "The request is not well-formed HTTP" },
  request_timeout: { status: 408, title: "The request did not arrive in time" },
  unauthorized: { status: 401, title: "A valid bearer token is required" },
  web_cookie_lost: { status: 401, title: "The web console login's cookie is missing or was replaced" },
  route_not_found: { status: 404, title: "No such route" },
  method_not_allowed: { status: 405, title: "The route does not take this method" },
  upgrade_required: { status: 426, title: "The route is a WebSocket" },
  session_not_found: { status: 404, title: "No such session" },
  operation_not_found: { status: 404, title: "No such operation" },
  command_not_found: { status: 404, title: "No such command in the session" },
  invalid_json: { status: 400, title: "The body is not valid JSON" },
  invalid_body: { status: 400, title: "The body does not have the expected shape" },
  invalid_query: { status: 400, title: "The query string does not have the expected shape" },
  unsupported_media_type: { status: 415, title: "The body must be application/json" },
  payload_too_large: { status: 413, title: "The body is too large" },
  too_deep: { status: 400, title: "The body nests arrays and objects too deeply" },
  precondition_required: { status: 428, title: "The request needs an If-Match header" },
  catalog_changed: { status: 409, title: "The revision in If-Match is stale" },
  settings_file_invalid: { status: 422, title: "A settings file is malformed" },
  settings_path_unsafe: { status: 400, title: "The project settings path leaves the workspace" },
  too_many_sessions: { status: 429, title: "The daemon holds as many sessions as it may" },
  too_many_streams: { status: 429, title: "The session has as many stream clients as it may" },
  too_many_connections: { status: 503, title: "The daemon holds as many connections as it may" },
  reload_required: { status: 409, title: "The skill changed on disk; reload the session" },
  not_found: { status: 404, title: "Not found" },
  invalid_params: { status: 400, title: "Invalid parameters" },
  limit_exceeded: { status: 400, title: "A limit was exceeded" },
  forbidden: { status: 403, title: "Not allowed" },
  origin_not_allowed: { status: 403, title: "The request's Host or Origin is not this daemon" },
  mcp_session_not_found: { status: 404, title: "No such MCP session; initialize a new one" },
  mcp_session_required: { status: 400, title: "The request needs an Mcp-Session-Id header, or must be an initialize request" },
  cancelled: { status: 409, title: "Cancelled" },
  conflict: { status: 409, title: "Conflict" },
  timeout: { status: 503, title: "Timed out" },
  kernel_died: { status: 503, title: "The session's kernel is not running" },
  kernel_unavailable: { status: 503, title: "No kernel can start on this machine as configured" },
  operation_conflict: { status: 409, title: "The operation id was already used with a different body" },
  invalid_operation_id: { status: 400, title: "The operation id is not a UUIDv7" },
  operation_expired: { status: 410, title: "The operation id is older than the receipt retention" },
  operation_future: { status: 400, title: "The operation id lies too far in the future" },
  queue_full: { status: 429, title: "The session has too many waiting inputs" },
  insufficient_storage: { status: 507, title: "The daemon's disk is full" },
  storage_busy: { status: 503, title: "Another process holds the daemon's database locked" },
  storage_unavailable: { status: 503, title: "The daemon's storage failed" },
  internal_error: { status: 500, title: "Internal error" },
} as const satisfies Record<AppErrorCode | AdmissionErrorCode, { status: number; title: string }> & Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof PROBLEMS;

/** Members a problem document defines itself; an extra field of these names is dropped, never sent in their place. */
const RESERVED = new Set(["type", "title", "status", "detail", "code"]);

/** An error answer: a stable code, a detail for people, and extra fields (snake_case). Thrown by handlers; the server sends it. */
export class HttpProblem extends Error {
  override readonly name = "HttpProblem";
  constructor(
    readonly code: ProblemCode,
    detail: string,
    readonly extra: Readonly<Record<string, unknown>> = {},
  ) {
    super(detail);
  }

  get status(): number {
    return PROBLEMS[this.code].status;
  }

  /** The problem document (RFC 9457) with its extra fields. */
  document(): ProblemDocument {
    const extra = Object.fromEntries(Object.entries(this.extra).filter(([key, value]) => !RESERVED.has(key) && value !== undefined));
    return { type: PROBLEM_TYPE_PREFIX + this.code, title: PROBLEMS[this.code].title, status: this.status, detail: this.message, code: this.code, ...extra };
  }

  /** Headers the answer carries besides its content type: how to authenticate, which methods the route takes, when to try again. */
  headers(): Record<string, string> {
    if (this.code === "unauthorized") return { "www-authenticate": 'Bearer realm="albedo"' };
    if (this.code === "method_not_allowed" && Array.isArray(this.extra.allow)) return { allow: this.extra.allow.join(", ") };
    if (this.code === "storage_busy") return { "retry-after": String(STORAGE_BUSY_RETRY_AFTER_S) };
    return {};
  }
}

/** Errors that mean no kernel can start here as configured (sandbox, interpreter, kernelspec, launch); retrying will not help. */
const KERNEL_UNAVAILABLE_ERRORS = [SandboxUnavailableError, KernelStartError, PythonUnavailableError, KernelSpecError, RemoteKernelError, RemoteSettingsError] as const;

/**
 * The problem for any thrown value: HttpProblem as is, an AppError by its code (its data as extra
 * fields), a broken settings file as 422, a kernel that cannot start as 503, a full disk as 507,
 * a database another process holds locked as 503 with Retry-After, other storage faults as 503,
 * else 500.
 */
export function problemOf(error: unknown): HttpProblem {
  if (error instanceof HttpProblem) return error;
  const fault = storageFault(error);
  if (fault) return new HttpProblem(fault.code, storageDetail(fault), { cause: fault.cause });
  if (KERNEL_UNAVAILABLE_ERRORS.some((type) => error instanceof type)) return new HttpProblem("kernel_unavailable", (error as Error).message);
  if (error instanceof SettingsFileError) {
    return new HttpProblem("settings_file_invalid", error.message, { file: error.file, fault: error.fault, problems: error.problems });
  }
  if (isAppError(error)) return new HttpProblem(error.code, error.message, snakeKeys(error.data ?? {}));
  return new HttpProblem("internal_error", "the daemon failed while handling the request; see its log");
}

/** `data` of a domain error with its keys in the wire's casing (`currentRevision` → `current_revision`). */
function snakeKeys(data: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).map(([key, value]) => [key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`), value]));
}

/** Answers an HTTP request with a problem document. */
export function sendProblem(res: ServerResponse, problem: HttpProblem): void {
  sendJson(res, problem.status, problem.document(), { ...problem.headers(), "content-type": PROBLEM_CONTENT_TYPE });
}

/**
 * A whole HTTP/1.1 answer carrying a problem document, for a socket with no response object: a
 * refused WebSocket upgrade, a connection closed to make room, a request that is not HTTP. The
 * connection closes after it.
 */
export function problemResponse(problem: HttpProblem): string {
  const text = JSON.stringify(problem.document());
  const headers = { ...problem.headers(), "content-type": PROBLEM_CONTENT_TYPE, "content-length": String(Buffer.byteLength(text)), connection: "close" };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? "Error"}\r\n${lines.join("")}\r\n${text}`;
}

/** Writes bytes of `contentType` (a RawBody's), never sniffed by a browser. */
export function sendBytes(res: ServerResponse, status: number, contentType: string, bytes: Uint8Array, headers: Readonly<Record<string, string>> = {}): void {
  res.writeHead(status, { "content-type": contentType, "x-content-type-options": "nosniff", ...headers, "content-length": String(bytes.byteLength) });
  res.end(bytes);
}

/** Writes a JSON body (or none for 204). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  const text = status === 204 || body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers, ...(text ? { "content-length": String(Buffer.byteLength(text)) } : {}) });
  res.end(text);
}
