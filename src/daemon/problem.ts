import type { ServerResponse } from "node:http";
import { ADMISSION_ERRORS } from "../operations/index.js";
import { isAppError, type AppErrorCode } from "../errors/index.js";
import { SettingsFileError } from "../settings/index.js";
import { SandboxUnavailableError } from "../sandbox/index.js";
import { KernelSpecError, KernelStartError, RemoteKernelError, RemoteSettingsError } from "../kernel/index.js";
import { PythonUnavailableError } from "../python/index.js";
import { storageDetail, storageFault } from "./storage.js";

/** Media type of every error body (RFC 9457). */
export const PROBLEM_CONTENT_TYPE = "application/problem+json";
/** Prefix of a problem's `type`; the stable `code` follows it. */
export const PROBLEM_TYPE_PREFIX = "urn:albedo:problem:";

/** Every code the daemon answers with, its HTTP status and its title. */
export const PROBLEMS = {
  unauthorized: { status: 401, title: "A valid bearer token is required" },
  route_not_found: { status: 404, title: "No such route" },
  method_not_allowed: { status: 405, title: "The route does not take this method" },
  session_not_found: { status: 404, title: "No such session" },
  operation_not_found: { status: 404, title: "No such operation" },
  command_not_found: { status: 404, title: "No such command in the session" },
  invalid_json: { status: 400, title: "The body is not valid JSON" },
  invalid_body: { status: 400, title: "The body does not have the expected shape" },
  unsupported_media_type: { status: 415, title: "The body must be application/json" },
  payload_too_large: { status: 413, title: "The body is too large" },
  too_deep: { status: 400, title: "The body nests arrays and objects too deeply" },
  precondition_required: { status: 428, title: "The request needs an If-Match header" },
  catalog_changed: { status: 409, title: "The revision in If-Match is stale" },
  settings_file_invalid: { status: 422, title: "A settings file is malformed" },
  too_many_sessions: { status: 429, title: "The daemon holds as many sessions as it may" },
  too_many_streams: { status: 429, title: "The session has as many stream clients as it may" },
  too_many_connections: { status: 503, title: "The daemon holds as many connections as it may" },
  reload_required: { status: 409, title: "The skill changed on disk; reload the session" },
  not_found: { status: 404, title: "Not found" },
  invalid_params: { status: 400, title: "Invalid parameters" },
  limit_exceeded: { status: 400, title: "A limit was exceeded" },
  forbidden: { status: 403, title: "Not allowed" },
  cancelled: { status: 409, title: "Cancelled" },
  timeout: { status: 503, title: "Timed out" },
  kernel_died: { status: 503, title: "The session's kernel is not running" },
  kernel_unavailable: { status: 503, title: "No kernel can start on this machine as configured" },
  settings_path_unsafe: { status: 400, title: "The project settings path leaves the workspace" },
  conflict: { status: 409, title: "Conflict" },
  insufficient_storage: { status: 507, title: "The daemon's disk is full" },
  storage_unavailable: { status: 503, title: "The daemon's storage failed" },
  internal_error: { status: 500, title: "Internal error" },
  ...ADMISSION_ERRORS,
} as const;

export type ProblemCode = keyof typeof PROBLEMS;

/** An HTTP error answer; thrown by handlers and turned into a problem document by the server. */
export class HttpProblem extends Error {
  override readonly name = "HttpProblem";
  readonly status: number;
  readonly title: string;
  constructor(
    readonly code: ProblemCode,
    detail: string,
    readonly extra: Readonly<Record<string, unknown>> = {},
  ) {
    super(detail);
    this.status = PROBLEMS[code].status;
    this.title = PROBLEMS[code].title;
  }

  /** The problem document. */
  body(): Record<string, unknown> {
    return { type: PROBLEM_TYPE_PREFIX + this.code, title: this.title, status: this.status, detail: this.message, code: this.code, ...this.extra };
  }
}

/** Errors that mean no kernel can start here as configured (sandbox, interpreter, kernelspec, launch); retrying will not help. */
const KERNEL_UNAVAILABLE_ERRORS = [SandboxUnavailableError, KernelStartError, PythonUnavailableError, KernelSpecError, RemoteKernelError, RemoteSettingsError] as const;

/** The problem for any thrown value: HttpProblem as is, AppError by its code, a broken settings file as 422, a kernel that cannot start as 503, a full disk as 507, other storage faults as 503, else 500. */
export function problemOf(error: unknown): HttpProblem {
  if (error instanceof HttpProblem) return error;
  const fault = storageFault(error);
  if (fault) return new HttpProblem(fault.code, storageDetail(fault), { cause: fault.cause });
  if (KERNEL_UNAVAILABLE_ERRORS.some((type) => error instanceof type)) return new HttpProblem("kernel_unavailable", (error as Error).message);
  if (error instanceof SettingsFileError) {
    return new HttpProblem("settings_file_invalid", error.message, { file: error.file, fault: error.fault, problems: error.problems });
  }
  if (isAppError(error)) return new HttpProblem(error.code satisfies AppErrorCode, error.message, error.data ? { data: error.data } : {});
  return new HttpProblem("internal_error", "the daemon failed while handling the request; see its log");
}

/** Writes a problem document. */
export function sendProblem(res: ServerResponse, problem: HttpProblem, headers: Readonly<Record<string, string>> = {}): void {
  sendJson(res, problem.status, problem.body(), { "content-type": PROBLEM_CONTENT_TYPE, ...headers });
}

/** Writes a JSON body (or none for 204). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  const text = status === 204 || body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers, ...(text ? { "content-length": String(Buffer.byteLength(text)) } : {}) });
  res.end(text);
}
