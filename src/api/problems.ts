/**
 * The problems the daemon answers with (RFC 9457): every code, its HTTP status and its title, in
 * one table. The runtime's own errors carry a code and no status; this is where a code meets one.
 */
import type { AppErrorCode } from "../errors/index.js";
import type { AdmissionErrorCode } from "../operations/index.js";

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
