import { STATUS_CODES, type ServerResponse } from "node:http";
import { PROBLEM_CONTENT_TYPE, PROBLEM_TYPE_PREFIX, PROBLEMS, type ProblemCode, type ProblemDocument } from "../api/index.js";
import { isAppError } from "../errors/index.js";
import { SettingsFileError } from "../settings/index.js";
import { SandboxUnavailableError } from "../sandbox/index.js";
import { KernelSpecError, KernelStartError, RemoteKernelError, RemoteSettingsError } from "../kernel/index.js";
import { PythonUnavailableError } from "../python/index.js";
import { STORAGE_BUSY_RETRY_AFTER_S } from "./limits.js";
import { storageDetail, storageFault } from "./storage.js";

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
