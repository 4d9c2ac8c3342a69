import { request as httpRequest } from "node:http";
import WebSocket from "ws";
import type { z } from "zod";
import type { DeepReadonly } from "../json/index.js";
import { API } from "./routes.js";
import { HEALTH_TIMEOUT_MS, MAX_REQUEST_BODY_BYTES, MAX_RESPONSE_BYTES } from "./limits.js";
import type { ProblemDocument } from "./resources.js";
import type { RouteSpec } from "./routeSpec.js";
import { readDaemonInfo, readToken, type DaemonInfo } from "./daemonFiles.js";
import { isSameProcessAlive } from "../platform/index.js";

/** A daemon answer: status and parsed JSON body (undefined when empty). */
export interface DaemonResponse<T = unknown> {
  readonly status: number;
  readonly body: T;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** An error answer from the daemon: its status, stable problem code and whole problem document. */
export class DaemonError extends Error {
  override readonly name = "DaemonError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly problem?: ProblemDocument,
  ) {
    super(message);
  }
}

type Input<T> = T extends z.ZodType ? z.input<T> : never;
type Success<S extends RouteSpec> = {
  [K in keyof S["responses"]]: K extends 200 | 201 | 202 | 204 ? (S["responses"][K]["schema"] extends z.ZodType ? DeepReadonly<z.output<S["responses"][K]["schema"]>> : undefined) : never;
}[keyof S["responses"]];

/** What a call of one route sends: its path parameters, body, query and If-Match, as the route declares them. */
export interface CallOptions<S extends RouteSpec> {
  readonly params?: Readonly<Record<string, string>>;
  readonly body?: Input<S["body"]>;
  readonly query?: Input<S["query"]>;
  readonly ifMatch?: string;
}

/** Talks to one daemon over HTTP (TCP or Unix socket) with its bearer token. */
export class DaemonClient {
  constructor(
    readonly info: DaemonInfo,
    private readonly token: string,
  ) {}

  /** Sends one request; resolves with any status (4xx/5xx included). Rejects on network failure or timeout. */
  send<T = unknown>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs?: number): Promise<DaemonResponse<T>> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    if (text !== undefined && Buffer.byteLength(text) > MAX_REQUEST_BODY_BYTES) return Promise.reject(new Error(`request body over MAX_REQUEST_BODY_BYTES = ${MAX_REQUEST_BODY_BYTES}`));
    const target = this.info.socket ? { socketPath: this.info.socket } : { host: new URL(this.info.url).hostname.replace(/^\[|\]$/g, ""), port: Number(new URL(this.info.url).port) };
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        { ...target, method, path, headers: { authorization: `Bearer ${this.token}`, ...(text ? { "content-type": "application/json" } : {}), ...headers } },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_RESPONSE_BYTES) req.destroy(new Error(`response over MAX_RESPONSE_BYTES = ${MAX_RESPONSE_BYTES}`));
            else chunks.push(chunk);
          });
          res.on("end", () => {
            const raw = Buffer.concat(chunks).toString("utf8");
            try {
              resolve({ status: res.statusCode ?? 0, body: (raw ? JSON.parse(raw) : undefined) as T, headers: res.headers });
            } catch (error) {
              reject(error);
            }
          });
        },
      );
      if (timeoutMs !== undefined) req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer from the daemon within ${timeoutMs} ms`)));
      req.on("error", reject);
      req.end(text);
    });
  }

  /**
   * Calls one route of the API (routes.ts), typed by its declaration: resolves with the body of its
   * successful answer, rejects with DaemonError (the problem's code and detail) for a status of
   * 400 or more.
   */
  async call<S extends RouteSpec>(spec: S, options: CallOptions<S> = {}): Promise<Success<S>> {
    let path = spec.path.replace(/\{([a-z_]+)\}/g, (_, key: string) => encodeURIComponent(options.params?.[key] ?? ""));
    if (options.query !== undefined) path += `?${new URLSearchParams(options.query as Record<string, string>).toString()}`;
    const headers: Record<string, string> = options.ifMatch === undefined ? {} : { "if-match": `"${options.ifMatch}"` };
    const response = await this.send<Success<S>>(spec.method, path, options.body, headers);
    if (response.status >= 400) {
      const problem = response.body as unknown as ProblemDocument | undefined;
      throw new DaemonError(response.status, problem?.code ?? "unknown", problem?.detail ?? `the daemon answered ${response.status}`, problem);
    }
    return response.body;
  }

  /** Opens the WebSocket stream of a session; resolves once it is open. */
  openStream(sessionId: string): Promise<WebSocket> {
    const path = API.stream.path.replace("{id}", encodeURIComponent(sessionId));
    const address = this.info.socket ? `ws+unix://${this.info.socket}:${path}` : `${this.info.url.replace(/^http/, "ws")}${path}`;
    const ws = new WebSocket(address, { headers: { authorization: `Bearer ${this.token}` } });
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(ws));
      ws.once("error", reject);
    });
  }
}

/**
 * The daemon named by `<stateDir>/daemon.json` when it is alive: its process still runs (pid and
 * start time, so a reused pid does not count) and GET /health answers within HEALTH_TIMEOUT_MS.
 * Undefined otherwise (no file, stale file, no token).
 */
export async function findRunningDaemon(stateDir: string): Promise<DaemonClient | undefined> {
  const info = await readDaemonInfo(stateDir);
  if (info === undefined || !isSameProcessAlive(info)) return undefined;
  const token = await readToken(stateDir);
  if (token === undefined) return undefined;
  const client = new DaemonClient(info, token);
  try {
    const health = await client.send(API.health.method, API.health.path, undefined, {}, HEALTH_TIMEOUT_MS);
    return health.status === 200 ? client : undefined;
  } catch {
    return undefined;
  }
}
