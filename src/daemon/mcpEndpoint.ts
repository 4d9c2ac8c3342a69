/**
 * albedo's MCP server over Streamable HTTP at `/mcp` on the daemon (P-1, P-5), in both eras on
 * the one path. A legacy client's MCP session (`initialize`, `Mcp-Session-Id`) is one daemon
 * session on the workspace its URL names (`/mcp?workspace=DIR`), opened before the `initialize`
 * answer, listed with the daemon's other sessions, and closed on `DELETE`, after
 * MCP_IDLE_TIMEOUT_MS with nothing in flight, or when its daemon session is closed. A 2026-07-28
 * request (its per-request `_meta` envelope) is served by an instance of its own; its kernel
 * session is named by a handle (HandleTable) bound to the URL's workspace, closed after the same
 * idle time, and its long cells become tasks.
 */
import { randomUUID } from "node:crypto";
import { stat } from "node:fs/promises";
import { isAbsolute } from "node:path";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createMcpHandler, isLegacyRequest, WebStandardStreamableHTTPServerTransport, type McpHttpHandler, type Server } from "@modelcontextprotocol/server";
import { buildServer, ConnectionSessions, HandleTable, TaskStore, type OpenedSession } from "../mcpServer/index.js";
import type { Log } from "../platform/index.js";
import { presentedToken, tokenMatches } from "./auth.js";
import { MAX_PATH_LENGTH } from "../api/index.js";
import { MAX_MCP_BODY_BYTES, MCP_IDLE_TIMEOUT_MS } from "./limits.js";
import type { LiveSession } from "./live.js";
import { checkLocalOrigin } from "./origins.js";
import { HttpProblem, problemOf, sendProblem } from "./problem.js";
import type { SessionRegistry } from "./registry.js";
import { readJsonBody } from "./requestBody.js";

/** Where MCP clients reach the daemon. */
export const MCP_PATH = "/mcp";

/** The header naming the MCP session of a request (Streamable HTTP). */
const SESSION_HEADER = "mcp-session-id";

export interface McpEndpointOptions {
  readonly registry: SessionRegistry;
  readonly token: string;
  readonly log?: Log;
  /** Overrides MCP_IDLE_TIMEOUT_MS. */
  readonly idleMs?: number;
}

/** One legacy MCP session: its transport, its server, the daemon session it serves, and what keeps it alive. */
class McpConnection {
  private inFlight = 0;
  private idle: NodeJS.Timeout | undefined;
  private ended: Promise<void> | undefined;

  constructor(
    readonly transport: WebStandardStreamableHTTPServerTransport,
    readonly server: { readonly server: Server; dispose(): void },
    readonly sessions: ConnectionSessions,
    readonly live: LiveSession,
    private readonly idleMs: number,
    private readonly finish: (connection: McpConnection, why: string) => Promise<void>,
  ) {}

  /** Counts `res` as in flight until it is closed (a POST's answer, or the GET event stream). */
  track(res: ServerResponse): void {
    this.inFlight += 1;
    clearTimeout(this.idle);
    res.once("close", () => {
      this.inFlight -= 1;
      if (this.inFlight === 0) this.arm();
    });
  }

  /** Starts the idle clock: nothing in flight from now on for idleMs closes the session. */
  arm(): void {
    clearTimeout(this.idle);
    if (this.ended !== undefined) return;
    this.idle = setTimeout(() => void this.end(`idle for ${Math.round(this.idleMs / 1000)} s`), this.idleMs);
    this.idle.unref();
  }

  /** Closes the transport and the daemon session once, whichever way the end came. */
  end(why: string): Promise<void> {
    this.ended ??= (async () => {
      clearTimeout(this.idle);
      this.server.dispose();
      this.sessions.dispose();
      await this.transport.close().catch(() => undefined);
      await this.finish(this, why);
    })();
    return this.ended;
  }
}

/** The `/mcp` route: token, Host and Origin checked, then each request handed to its era's serving. */
export class McpEndpoint {
  private readonly connections = new Map<string, McpConnection>();
  private readonly handles: HandleTable;
  private readonly tasks = new TaskStore();
  private readonly modern: McpHttpHandler;
  private closing = false;

  constructor(private readonly options: McpEndpointOptions) {
    const idleMs = options.idleMs ?? MCP_IDLE_TIMEOUT_MS;
    this.handles = new HandleTable({ open: (workspace) => this.openSession(workspace), idleMs, log: (message) => options.log?.("info", message) });
    this.modern = createMcpHandler(
      ({ requestInfo }) => {
        // The URL was checked before the request reached the handler (workspaceOf): the handles of that workspace alone.
        const workspace = new URL(requestInfo!.url).searchParams.get("workspace")!;
        return buildServer({ era: "modern", sessions: this.handles.source(workspace), tasks: this.tasks, taskOwner: workspace, announce: false }).server;
      },
      { legacy: "reject", maxRequestBodySize: MAX_MCP_BODY_BYTES, onerror: (error) => options.log?.("debug", `${MCP_PATH} (2026-07-28): ${error.message}`) },
    );
    // A reload of a handle's session reaches clients listening on subscriptions/listen.
    this.handles.onCatalogChange(() => {
      this.modern.notify.toolsChanged();
      this.modern.notify.promptsChanged();
      this.modern.notify.resourcesChanged();
    });
  }

  /** Whether `url` (a request's target) is the MCP endpoint. */
  static owns(url: string | undefined): boolean {
    const path = (url ?? "/").split("?", 1)[0];
    return path === MCP_PATH;
  }

  /** MCP sessions open now: legacy connections and 2026-07-28 handles. */
  get size(): number {
    return this.connections.size + this.handles.size;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? "/", "http://albedo.invalid");
      if (!tokenMatches(presentedToken(req, url, false), this.options.token)) {
        throw new HttpProblem("unauthorized", "send Authorization: Bearer <token>; the token is in daemon.token in the state dir");
      }
      checkLocalOrigin(req);
      const id = req.headers[SESSION_HEADER];
      if (typeof id === "string") return await this.forward(id, req, res);
      if (req.method !== "POST") throw new HttpProblem("mcp_session_required", `${req.method} ${MCP_PATH} needs the Mcp-Session-Id an initialize answer gave`);
      const body = await readJsonBody(req, { bytes: MAX_MCP_BODY_BYTES, name: "MAX_MCP_BODY_BYTES" });
      const request = webRequest(req, body);
      if (await isLegacyRequest(request.web, body, { maxRequestBodySize: MAX_MCP_BODY_BYTES })) {
        if (!isInitialize(body)) throw new HttpProblem("mcp_session_required", "send initialize first: a request without Mcp-Session-Id starts a session");
        return await this.start(url, req, res, request, body);
      }
      await workspaceOf(url);
      await sendWeb(res, await this.modern.fetch(request.web, { parsedBody: body }), request.abort);
    } catch (error) {
      const problem = problemOf(error);
      if (problem.status >= 500) this.options.log?.("error", `${req.method} ${MCP_PATH}: ${problem.code}: ${problem.message}`);
      if (!res.headersSent) sendProblem(res, problem);
      else res.destroy();
    }
  }

  /** A request of an open legacy session: its transport answers (POST, the GET event stream, DELETE). */
  private async forward(id: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const connection = this.connections.get(id);
    if (connection === undefined) throw new HttpProblem("mcp_session_not_found", `no MCP session ${id.slice(0, 80)} in this daemon (closed, idle too long, or the daemon restarted); initialize a new one`);
    const body = req.method === "POST" ? await readJsonBody(req, { bytes: MAX_MCP_BODY_BYTES, name: "MAX_MCP_BODY_BYTES" }) : undefined;
    connection.track(res);
    const request = webRequest(req, body);
    await sendWeb(res, await connection.transport.handleRequest(request.web, body === undefined ? {} : { parsedBody: body }), request.abort);
  }

  /** A legacy initialize: opens the daemon session first (a failure is the answer, and nothing is kept), then the MCP session. */
  private async start(url: URL, req: IncomingMessage, res: ServerResponse, request: WebRequest, body: unknown): Promise<void> {
    const workspace = await workspaceOf(url);
    const live = await this.options.registry.open(workspace, {}, { client: "mcp" });
    const sessions = new ConnectionSessions();
    const served = buildServer({ era: "legacy", sessions, announce: true });
    let connection: McpConnection | undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void this.connections.set(id, connection!),
    });
    connection = new McpConnection(transport, served, sessions, live, this.options.idleMs ?? MCP_IDLE_TIMEOUT_MS, (ended, why) => this.finish(ended, why));
    const opened = connection;
    // Closed elsewhere (DELETE /sessions/{id}, the kernel's end, the daemon's shutdown): the MCP session ends with it.
    live.onClosed(() => void opened.end("its daemon session was closed"));
    served.server.onclose = () => void opened.end("the transport closed");
    try {
      await served.server.connect(transport);
      sessions.attach(live.session);
      this.options.log?.("info", `MCP client opened session ${live.id} on ${workspace}`);
      opened.track(res);
      await sendWeb(res, await transport.handleRequest(request.web, { parsedBody: body }), request.abort);
    } catch (error) {
      await opened.end("its initialize failed");
      throw error;
    }
    // An initialize the transport refused made no session; nothing may stay open for it.
    if (transport.sessionId === undefined || !this.connections.has(transport.sessionId)) await opened.end("its initialize was refused");
  }

  /** A session for a 2026-07-28 handle, and how it ends: closed by the handle table, or elsewhere (REST, its kernel, shutdown). */
  private async openSession(workspace: string): Promise<OpenedSession> {
    const live = await this.options.registry.open(workspace, {}, { client: "mcp" });
    this.options.log?.("info", `MCP client (2026-07-28) opened session ${live.id} on ${workspace}`);
    return {
      session: live.session,
      close: async () => {
        // At shutdown the registry closes every session itself, kernels side by side.
        if (!this.closing && this.options.registry.list().includes(live)) await this.options.registry.close(live.id);
      },
      onClosed: (listener) => void live.onClosed(listener),
    };
  }

  /** Forgets a connection and closes its daemon session unless that is what ended it. */
  private async finish(connection: McpConnection, why: string): Promise<void> {
    const id = connection.transport.sessionId;
    if (id !== undefined && this.connections.get(id) === connection) this.connections.delete(id);
    this.options.log?.("info", `MCP session of session ${connection.live.id} closed: ${why}`);
    // At shutdown the registry closes every session itself, kernels side by side.
    if (this.closing) return;
    try {
      if (this.options.registry.list().includes(connection.live)) await this.options.registry.close(connection.live.id);
    } catch (error) {
      this.options.log?.("warn", `closing the session of an MCP client: ${(error as Error).message}`);
    }
  }

  /** Ends every MCP session's transport and handle (the daemon's shutdown; the registry closes the sessions) and refuses new ones. */
  async close(): Promise<void> {
    this.closing = true;
    this.tasks.close();
    await Promise.allSettled([...[...this.connections.values()].map((connection) => connection.end("the daemon is shutting down")), this.handles.close(), this.modern.close()]);
  }
}

/** A Node request as the SDK's web-standard faces take it, with the body already read, and what aborts it when the client goes away. */
interface WebRequest {
  readonly web: Request;
  readonly abort: AbortController;
}

function webRequest(req: IncomingMessage, body: unknown): WebRequest {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  headers.delete("content-length");
  const abort = new AbortController();
  const url = `http://${req.headers.host ?? "albedo.invalid"}${req.url ?? "/"}`;
  const web = new Request(url, { method: req.method ?? "GET", headers, signal: abort.signal, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { web, abort };
}

/** Writes the SDK's answer to `res`: its status, headers and body, streamed (an event stream stays open until either side ends it). */
async function sendWeb(res: ServerResponse, answer: Response, abort: AbortController): Promise<void> {
  const gone = () => abort.abort();
  res.once("close", gone);
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(answer.status, headers);
  if (answer.body === null) {
    res.end();
    return;
  }
  res.flushHeaders();
  const reader = answer.body.getReader();
  const stop = () => void reader.cancel().catch(() => undefined);
  res.once("close", stop);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise<void>((resume) => { res.once("drain", resume); res.once("close", resume); });
      if (res.destroyed) break;
    }
  } catch {
    // The client went away, or the SDK ended the stream: nothing more to write.
  } finally {
    res.off("close", stop);
    if (!res.destroyed) res.end();
  }
}

/** The workspace an initialize's URL names: `?workspace=` with an absolute path to a directory. Throws 400 invalid_query. */
async function workspaceOf(url: URL): Promise<string> {
  const workspace = url.searchParams.get("workspace");
  if (workspace === null || workspace === "") {
    throw new HttpProblem("invalid_query", `name the workspace to serve in the URL: ${MCP_PATH}?workspace=/absolute/path`, { field: "workspace" });
  }
  if (workspace.length > MAX_PATH_LENGTH || !isAbsolute(workspace)) {
    throw new HttpProblem("invalid_query", `workspace must be an absolute path of at most ${MAX_PATH_LENGTH} characters`, { field: "workspace" });
  }
  if (!(await stat(workspace).catch(() => undefined))?.isDirectory()) throw new HttpProblem("invalid_query", `workspace ${workspace} is not a directory`, { field: "workspace" });
  return workspace;
}

/** Whether a posted body is an initialize request (alone, or in a batch). */
function isInitialize(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => typeof message === "object" && message !== null && (message as { method?: unknown }).method === "initialize");
}
