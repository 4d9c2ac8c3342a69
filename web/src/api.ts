/**
 * The daemon's public HTTP API as the page calls it: same origin, the login's page secret in a
 * header and its cookie sent by the browser (never the daemon's token), JSON in and out, problems
 * turned into ApiError. Routes, paths and shapes come from the generated contract
 * (generated/contract.ts, made from the daemon's own declarations); nothing here restates them.
 */
import { ROUTES, type Problem, type RouteTypes, type Session, type TranscriptRow } from "./generated/contract.js";
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
/** Opening a session starts its kernel, which may take a while on a cold machine. */
export const OPEN_SESSION_TIMEOUT_MS = 120_000;

type RouteName = keyof RouteTypes;
/** The routes that answer JSON (or nothing), the ones `call` makes. */
type JsonRoute = { [N in RouteName]: RouteTypes[N] extends { readonly answer: unknown } ? N : never }[RouteName];
/** What route N answers with. */
type Answer<N extends JsonRoute> = RouteTypes[N] extends { readonly answer: infer A } ? A : never;

/** What a call of route N sends: its path parameters and body as it declares them, its query if any, and If-Match where it needs one. */
type CallParts<N extends RouteName> = Pick<RouteTypes[N], Extract<keyof RouteTypes[N], "params" | "body">> &
  Partial<Pick<RouteTypes[N], Extract<keyof RouteTypes[N], "query">>> &
  (RouteTypes[N] extends { readonly ifMatch: true } ? { readonly ifMatch: string } : unknown);
type CallArgs<N extends RouteName> = object extends CallParts<N> ? [parts?: CallParts<N>, timeoutMs?: number] : [parts: CallParts<N>, timeoutMs?: number];

/** The path of route N with its parameters filled in. */
export function pathOf<N extends RouteName>(name: N, ...[params]: RouteTypes[N] extends { readonly params: infer P } ? [params: P] : []): string {
  const values = (params ?? {}) as Readonly<Record<string, string>>;
  return ROUTES[name].path.replace(/\{([a-z_]+)\}/g, (_, key: string) => encodeURIComponent(values[key] ?? ""));
}

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
    const problem = (await response.clone().json().catch(() => ({}))) as Partial<Problem>;
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
  const problem = (await response.json().catch(() => ({}))) as Partial<Problem>;
  return new ApiError(response.status, problem.code ?? "unknown", problem.detail ?? `the daemon answered ${response.status}`);
}

/**
 * Calls route N of the API, typed by its declaration: resolves with its answer's body (undefined
 * for none), rejects with ApiError for a problem, a timeout or an unreachable daemon.
 */
export async function call<N extends JsonRoute>(name: N, ...[parts, timeoutMs = REQUEST_TIMEOUT_MS]: CallArgs<N>): Promise<Answer<N>> {
  const { params, query, body, ifMatch } = (parts ?? {}) as { params?: Record<string, string>; query?: Record<string, unknown>; body?: unknown; ifMatch?: string };
  const search = new URLSearchParams(Object.entries(query ?? {}).flatMap(([key, value]) => (value === undefined ? [] : [[key, String(value)]]))).toString();
  const path = (pathOf as (name: RouteName, params?: Record<string, string>) => string)(name, params) + (search ? `?${search}` : "");
  const response = await send(ROUTES[name].method, path, {
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...(ifMatch === undefined ? {} : { "if-match": `"${ifMatch}"` }) },
    body: body === undefined ? null : JSON.stringify(body),
  }, timeoutMs);
  if (!response.ok) throw await failure(response);
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as Answer<N>;
}

/** Bytes the API answers with (an image, at the path its resource names), as a Blob; an image element cannot send the page secret itself. */
export async function apiBlob(path: string): Promise<Blob> {
  const response = await send("GET", path, {}, REQUEST_TIMEOUT_MS);
  if (!response.ok) throw await failure(response);
  return response.blob();
}

/** A command of the session, as its resource lists them. */
export type Command = Session["commands"][number];

/** A built-in command's answer, which writes no transcript rows: shown on the page where it was asked. */
export interface CommandEntry {
  readonly kind: "command";
  readonly turn_id: string;
  readonly seq: number;
  readonly visible_text: string;
  readonly reply: unknown;
}

export type Entry = TranscriptRow | CommandEntry;

/** What to tell the person about a failure. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
