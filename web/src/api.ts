/**
 * The daemon's public HTTP API as the page calls it: same origin, the login's page secret in a
 * header and its cookie sent by the browser (never the daemon's token), JSON in and out, problems
 * turned into ApiError.
 */
import { isCookieLost, loginHeaders, renewCookie } from "./login.js";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Longest the page waits for one answer before saying so (a cell's execute may run long: its own bound). */
export const REQUEST_TIMEOUT_MS = 30_000;
export const EXECUTE_TIMEOUT_MS = 10 * 60_000;

/**
 * One request with this page's login. An answer saying the login's cookie was replaced or removed
 * (another program on 127.0.0.1 can do that) renews the cookie with the page secret and asks once more.
 */
async function send(method: string, path: string, init: RequestInit, timeoutMs: number): Promise<Response> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const once = () => fetch(path, { ...init, method, credentials: "same-origin", headers: { ...(init.headers as Record<string, string>), ...loginHeaders() }, signal: controller.signal });
  try {
    const response = await once();
    if (response.status !== 401) return response;
    const problem = (await response.clone().json().catch(() => ({}))) as { code?: string };
    return isCookieLost(response.status, problem.code) && (await renewCookie()) ? await once() : response;
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") throw new ApiError(0, "timeout", `no answer from the daemon within ${timeoutMs / 1000} s`);
    if (error instanceof TypeError) throw new ApiError(0, "unreachable", "the daemon cannot be reached; is `albedo serve` still running?");
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

async function failure(response: Response): Promise<ApiError> {
  const problem = (await response.json().catch(() => ({}))) as { code?: string; detail?: string };
  return new ApiError(response.status, problem.code ?? "unknown", problem.detail ?? `the daemon answered ${response.status}`);
}

export async function api<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs = REQUEST_TIMEOUT_MS): Promise<{ body: T; etag: string | null }> {
  const response = await send(method, path, {
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? null : JSON.stringify(body),
  }, timeoutMs);
  if (!response.ok) throw await failure(response);
  const text = await response.text();
  return { body: (text ? JSON.parse(text) : undefined) as T, etag: response.headers.get("etag") };
}

/** Bytes the API answers with (an image), as a Blob; an image element cannot send the page secret itself. */
export async function apiBlob(path: string): Promise<Blob> {
  const response = await send("GET", path, {}, REQUEST_TIMEOUT_MS);
  if (!response.ok) throw await failure(response);
  return response.blob();
}

export interface Command {
  readonly name: string;
  readonly description: string;
  readonly arguments: readonly { name: string; help: string; required: boolean }[];
  readonly callers: readonly ("user" | "model")[];
}

/** Who opened a session (the daemon's SESSION_CLIENTS). */
export type SessionClient = "console" | "chat" | "web" | "notebook" | "mcp" | "api";

export interface SessionInfo {
  readonly id: string;
  readonly workspace: string;
  readonly client: SessionClient;
  readonly opened_at: string;
  readonly kernel: { readonly status: string };
  readonly commands: readonly Command[];
  readonly needs_reload: boolean;
  readonly composition: { readonly extensions: { readonly mcp: { readonly enabled: boolean; readonly servers: readonly McpServer[] } } };
}

export interface McpServer {
  readonly name: string;
  readonly origin: "global" | "project";
  readonly status: "starting" | "running" | "failed" | "stopped" | "disabled";
  readonly tools: number;
  readonly diagnostics: readonly string[];
}

export interface Image {
  readonly id: string;
  readonly mime: string;
  readonly width: number;
  readonly height: number;
  readonly bytes: number;
  readonly url: string;
}

interface Place {
  readonly turn_id: string;
  readonly seq: number;
}

export type Row = Place &
  (
    | { readonly kind: "user" | "assistant" | "notice" | "error"; readonly text: string }
    | { readonly kind: "code"; readonly code: string }
    | { readonly kind: "output"; readonly text: string; readonly status: "ok" | "error"; readonly truncated: boolean; readonly images?: readonly Image[] }
    | { readonly kind: "skill"; readonly skill: string; readonly bytes: number; readonly via: string; readonly already_loaded: boolean; readonly text: string }
    | { readonly kind: "mcp"; readonly server: string; readonly tool: string; readonly via: string; readonly ms: number; readonly is_error: boolean; readonly text: string }
  );

export type StreamMessage =
  | { readonly type: "status"; readonly kernel: { readonly status: string }; readonly reason: string | null }
  | { readonly type: "row"; readonly row: Row }
  | { readonly type: "text"; readonly turn_id: string; readonly delta: string }
  | { readonly type: "transcript"; readonly turn: Turn }
  | { readonly type: "output"; readonly execution_id: string; readonly msg_type: string; readonly content: Record<string, unknown> };

export interface Turn {
  readonly turn_id: string;
  readonly visible_text: string;
  readonly state: string;
  readonly outcome: { readonly state: string; readonly reply?: unknown; readonly error?: string | null } | null;
}

/** A built-in command's answer, which writes no transcript rows: shown on the page where it was asked. */
export interface CommandEntry {
  readonly kind: "command";
  readonly turn_id: string;
  readonly seq: number;
  readonly visible_text: string;
  readonly reply: unknown;
}

export type Entry = Row | CommandEntry;

export interface ExecuteAnswer {
  readonly status: "ok" | "error" | "aborted";
  readonly execution_count: number | null;
  readonly outputs: readonly { msg_type: string; content: Record<string, unknown> }[];
  readonly images: readonly Image[];
  readonly image_notes: readonly string[];
}

export const sessionPath = (id: string, rest = ""): string => `/sessions/${encodeURIComponent(id)}${rest}`;

/** What to tell the person about a failure. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
