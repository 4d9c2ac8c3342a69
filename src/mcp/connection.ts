/**
 * One live connection to a server (M-2, M-5, M-6): the SDK Client over our stdio or HTTP
 * transport, in the era the server speaks (`server/discover` first, the legacy `initialize`
 * handshake when the server does not know it), its tool list read within the startup deadline,
 * then calls, reads and list refreshes. A connection is never reused after it closed; the server
 * that owns it makes a new one.
 */
import { Client, SdkError, SdkErrorCode, SdkHttpError, type PriorDiscovery, type Progress, type StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { z } from "zod";
import { AppError } from "../errors/index.js";
import type { Log } from "../platform/index.js";
import { toolPolicy } from "./glob.js";
import { closeHttp, httpTransport } from "./httpTransport.js";
import { MAX_MCP_PROGRESS_MESSAGE_CHARS, MAX_MCP_TOOL_LIST_PAGES, MCP_PROBE_SHARE_OF_STARTUP } from "./limits.js";
import { RawChannel, RawRequestAborted, RawRpcError, TASKS_EXTENSION } from "./rawChannel.js";
import { Redactor } from "./redact.js";
import type { ResolvedServer } from "./resolve.js";
import { callResult, readResult, type McpCallResult, type McpProgress, type McpReadResult } from "./result.js";
import { McpOversizeError, StdioTransport } from "./stdioTransport.js";
import { callWithTasks, McpTaskError } from "./tasks.js";
import { argumentErrors, readToolList, type ToolList } from "./toolList.js";

/** The name and version albedo gives in initialize. */
export interface McpClientInfo {
  readonly name: string;
  readonly version: string;
}

/** The protocol era a connection speaks: 2026-07-28 and later ("modern"), or up to 2025-11-25 ("legacy"). */
export type McpProtocolEra = "modern" | "legacy";

export interface ConnectionOptions {
  readonly log: Log;
  readonly clientInfo: McpClientInfo;
  /** The era a previous connection to the same entry found, so a restart does not probe again. */
  readonly prior?: PriorDiscovery;
  /** Called once when the connection closed by itself (the process exited, the stream broke). */
  readonly onClosed: () => void;
  /** Called after a tools/list_changed notification refreshed the list. */
  readonly onToolsChanged: () => void;
}

// tools/list read leniently: each tool is checked on its own, so one bad tool is a diagnostic
// and not a failed list.
const LenientToolList = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });
// Results are read as data by result.ts, which bounds and checks every part it uses.
const AnyResult = z.looseObject({});

/** Why a server did not start; `retry` is false when starting again cannot help (its deadline passed, its command is missing). */
export class McpStartError extends Error {
  override readonly name = "McpStartError";
  /** `probeClosed`: a stdio server that exited before it answered anything (the era probe, then the handshake, found it gone). */
  constructor(message: string, readonly retry: boolean, readonly stderr: readonly string[], readonly probeClosed = false) {
    super(message);
  }
}

export class Connection {
  private closing = false;
  private refreshing: Promise<void> | undefined;
  private list: ToolList = { tools: new Map(), diagnostics: [] };
  private raw: RawChannel | undefined;

  private constructor(
    readonly resolved: ResolvedServer,
    readonly redactor: Redactor,
    private readonly client: Client,
    private readonly transport: StdioTransport | StreamableHTTPClientTransport,
    private readonly options: ConnectionOptions,
  ) {}

  /**
   * Connects in the server's era (`options.prior`, else by the `server/discover` probe) and reads
   * the tool list within `resolved.startupTimeoutMs` (or until `stop` aborts); throws
   * McpStartError (redacted) when it cannot, with `probeClosed` set when a stdio server exited
   * before it answered anything (some legacy servers end on any request before `initialize`).
   */
  static async open(resolved: ResolvedServer, options: ConnectionOptions, stop: AbortSignal): Promise<Connection> {
    const deadline = AbortSignal.timeout(resolved.startupTimeoutMs);
    return Connection.attempt(resolved, options, AbortSignal.any([deadline, stop]), deadline);
  }

  private static async attempt(resolved: ResolvedServer, options: ConnectionOptions, signal: AbortSignal, deadline: AbortSignal): Promise<Connection> {
    const redactor = new Redactor(resolved.secrets);
    const { launch } = resolved;
    const transport = launch.kind === "stdio" ? new StdioTransport({ server: resolved.name, launch, log: options.log, redactor }) : httpTransport(launch);
    const probeMs = Math.max(1, Math.floor(resolved.startupTimeoutMs * MCP_PROBE_SHARE_OF_STARTUP));
    const client = new Client({ name: options.clientInfo.name, version: options.clientInfo.version }, {
      capabilities: {},
      versionNegotiation: { mode: "auto", probe: { timeoutMs: probeMs, maxRetries: 0 } },
      listMaxPages: MAX_MCP_TOOL_LIST_PAGES,
    });
    const connection = new Connection(resolved, redactor, client, transport, options);
    // The SDK's era probe does not heed the connect's signal: a stop or the deadline closes the transport under it.
    const abandon = () => void connection.close();
    signal.addEventListener("abort", abandon, { once: true });
    try {
      await client.connect(transport, { signal, timeout: resolved.startupTimeoutMs, ...(options.prior === undefined ? {} : { prior: options.prior }) });
      client.onclose = () => connection.closed();
      connection.list = await connection.readTools(signal);
      signal.removeEventListener("abort", abandon);
    } catch (error) {
      signal.removeEventListener("abort", abandon);
      await connection.close();
      // A spawn failure carries a string code (ENOENT, EACCES): trying again cannot help; nor
      // can it for an HTTP server that answered (an error status, a redirect) or is not there.
      const spawnFailed = !(error instanceof SdkError) && typeof (error as { code?: unknown }).code === "string";
      const retry = launch.kind === "stdio" && !signal.aborted && !spawnFailed;
      const probeClosed = transport instanceof StdioTransport && transport.exitedBeforeAnswering;
      throw new McpStartError(connection.startupProblem(error, deadline), retry, connection.stderrTail(), probeClosed);
    }
    client.setNotificationHandler("notifications/tools/list_changed", () => connection.refresh());
    if (connection.era === "modern") {
      connection.raw = new RawChannel(transport, { protocolVersion: client.getNegotiatedProtocolVersion() ?? "2026-07-28", clientInfo: options.clientInfo });
      void connection.listen();
    }
    return connection;
  }

  /** The era this connection speaks. */
  get era(): McpProtocolEra {
    return this.client.getProtocolEra() === "modern" ? "modern" : "legacy";
  }

  /** The protocol version agreed with the server. */
  get protocolVersion(): string | undefined {
    return this.client.getNegotiatedProtocolVersion();
  }

  /** What a restart of the same entry may skip the probe with. */
  get verdict(): PriorDiscovery {
    const discover = this.client.getDiscoverResult();
    return discover === undefined ? { kind: "legacy" } : { kind: "modern", discover };
  }

  /** Whether the server offers the Tasks extension (only in the modern era). */
  get offersTasks(): boolean {
    const extensions = (this.client.getServerCapabilities() as { extensions?: Record<string, unknown> } | undefined)?.extensions;
    return this.raw !== undefined && typeof extensions?.[TASKS_EXTENSION] === "object" && extensions[TASKS_EXTENSION] !== null;
  }

  /** Whether the connection ended: closed by us, or by the server (then onClosed was called, unless it closed while opening). */
  get isClosed(): boolean {
    return this.closing;
  }

  get tools(): ToolList {
    return this.list;
  }

  /** The pid (and process group) of a stdio server; undefined over HTTP. */
  get pid(): number | undefined {
    return this.transport instanceof StdioTransport ? this.transport.pid : undefined;
  }

  /** The last lines of a stdio server's stderr. */
  stderrTail(): readonly string[] {
    return this.transport instanceof StdioTransport ? this.transport.stderrTail() : [];
  }

  /**
   * Calls `tool` (known and allowed) with checked arguments, passing its progress notifications to
   * `onProgress`; throws AppError as McpHub.call documents. On a server that offers the Tasks
   * extension the call may become a task, followed to its end (`onStatus` hears its status
   * messages) and cancelled with the cell.
   */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal, onProgress?: (progress: McpProgress) => void, onStatus?: (text: string) => void): Promise<McpCallResult> {
    const qualified = `${this.resolved.name}.${tool}`;
    const entry = this.list.tools.get(tool)!;
    if (entry.validate === undefined) throw new AppError("conflict", `${qualified} cannot be called: ${entry.problem}`);
    if (!entry.validate(args)) throw new AppError("invalid_params", `arguments of ${qualified} do not match its input schema: ${argumentErrors(entry.validate)}`);
    if (signal.aborted) throw new AppError("cancelled", `the call of ${qualified} was cancelled`);
    const started = Date.now();
    let raw;
    try {
      // With onprogress the SDK sends a progress token, so the server knows to report.
      const progress = onProgress === undefined ? {} : { onprogress: (update: Progress) => onProgress(this.progressOf(update)) };
      raw = this.offersTasks
        ? await callWithTasks(this.raw!, tool, args, { signal, timeoutMs: this.resolved.callTimeoutMs, ...(onStatus === undefined ? {} : { onStatus: (text) => onStatus(this.redactor.quote(text, MAX_MCP_PROGRESS_MESSAGE_CHARS)) }) })
        : await this.client.request({ method: "tools/call", params: { name: tool, arguments: args } }, AnyResult, { signal, timeout: this.resolved.callTimeoutMs, ...progress });
    } catch (error) {
      return this.callFailure(qualified, error, signal, Date.now() - started);
    }
    return callResult(qualified, raw, Date.now() - started, this.redactor);
  }

  /** A progress notification as the caller may see it: the message cut to MAX_MCP_PROGRESS_MESSAGE_CHARS and redacted. */
  private progressOf(update: Progress): McpProgress {
    const message = typeof update.message === "string" && update.message !== "" ? this.redactor.redact(update.message.slice(0, MAX_MCP_PROGRESS_MESSAGE_CHARS)) : undefined;
    return { progress: update.progress, ...(typeof update.total === "number" ? { total: update.total } : {}), ...(message !== undefined ? { message } : {}) };
  }

  /** Reads the resource `uri` (a link a tool returned), bounded by MCP_MAX_RESULT_BYTES; throws AppError. */
  async read(uri: string, signal: AbortSignal): Promise<McpReadResult> {
    const where = `${uri.slice(0, 200)} from ${this.resolved.name}`;
    let raw;
    try {
      raw = await this.client.request({ method: "resources/read", params: { uri } }, AnyResult, { signal, timeout: this.resolved.callTimeoutMs });
    } catch (error) {
      const failure = this.callFailure(`the read of ${where}`, error, signal, 0);
      throw new AppError("conflict", `reading ${where} failed: ${failure.error_text ?? "no reason given"}`);
    }
    return readResult(where, raw, this.redactor);
  }

  /** Ends the connection (the stdio ladder, or the HTTP session's DELETE); onClosed is not called. */
  async close(): Promise<void> {
    this.closing = true;
    await (this.transport instanceof StdioTransport ? this.transport.close() : closeHttp(this.transport)).catch(() => undefined);
  }

  private closed(): void {
    if (this.closing) return;
    this.closing = true;
    // The process may have left children in its group; the ladder ends them.
    void this.close();
    this.options.onClosed();
  }

  /**
   * In the modern era nothing arrives unasked: tool-list changes come on a `subscriptions/listen`
   * stream, opened when the server says its list can change, and opened again while the
   * connection lives if the server drops it.
   */
  private async listen(): Promise<void> {
    const tools = this.client.getServerCapabilities()?.tools as { listChanged?: boolean } | undefined;
    if (tools?.listChanged !== true) return;
    while (!this.closing) {
      try {
        const subscription = await this.client.listen({ toolsListChanged: true });
        if ((await subscription.closed) !== "remote") return;
      } catch (error) {
        if (!this.closing) this.options.log("warn", `mcp ${this.resolved.name}: the tool-list subscription could not be opened: ${this.quote(error)}`, { server: this.resolved.name });
        return;
      }
    }
  }

  private async readTools(signal: AbortSignal): Promise<ToolList> {
    const raw: unknown[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await this.client.request({ method: "tools/list", params: cursor === undefined ? {} : { cursor } }, LenientToolList, { signal, timeout: this.resolved.startupTimeoutMs });
      raw.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined && ++pages < MAX_MCP_TOOL_LIST_PAGES);
    const list = readToolList(this.resolved.name, raw, toolPolicy(this.resolved.tools), this.redactor);
    const cut = cursor === undefined ? [] : [`the tool list has more than ${MAX_MCP_TOOL_LIST_PAGES} pages (MAX_MCP_TOOL_LIST_PAGES); the rest is left out`];
    return { tools: list.tools, diagnostics: [...list.diagnostics, ...cut] };
  }

  /** Re-reads the list after tools/list_changed; one refresh at a time, a notice during one starts another after it. */
  private refresh(): void {
    const run = async () => {
      try {
        this.list = await this.readTools(AbortSignal.timeout(this.resolved.startupTimeoutMs));
        this.options.onToolsChanged();
      } catch (error) {
        this.options.log("warn", `mcp ${this.resolved.name}: the tool list could not be refreshed: ${this.quote(error)}`, { server: this.resolved.name });
      }
    };
    this.refreshing = (this.refreshing ?? Promise.resolve()).then(run);
  }

  private startupProblem(error: unknown, signal: AbortSignal): string {
    if (signal.aborted) return `did not answer initialize (or server/discover) and tools/list within ${this.resolved.startupTimeoutMs} ms (startup_timeout_ms)`;
    const broken = this.transport instanceof StdioTransport ? this.transport.broken : undefined;
    return this.quote(broken ?? error);
  }

  private callFailure(qualified: string, error: unknown, signal: AbortSignal, ms: number): McpCallResult {
    const broken = this.transport instanceof StdioTransport ? this.transport.broken : undefined;
    if (broken instanceof McpOversizeError || error instanceof McpOversizeError) {
      throw new AppError("limit_exceeded", `the answer to ${qualified} is over the read bound: ${this.quote(broken ?? error)}; the server is restarted`);
    }
    if (signal.aborted) throw new AppError("cancelled", `the call of ${qualified} was cancelled`);
    if ((error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) || (error instanceof McpTaskError && error.kind === "timeout")) {
      throw new AppError("timeout", `${qualified} did not answer within ${this.resolved.callTimeoutMs} ms (call_timeout_ms)`);
    }
    if ((error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed) || (error instanceof RawRequestAborted && error.closed)) {
      throw new AppError("conflict", `${this.resolved.name} closed its connection during the call of ${qualified}`);
    }
    // A JSON-RPC error from the server (or a task that failed) is the tool failing: returned as an error result.
    const text = error instanceof RawRpcError ? `MCP error ${error.code}: ${error.message}` : error;
    return { value: null, images: [], links: [], is_error: true, error_text: this.quote(text), bytes: 0, ms };
  }

  /** An error's message fit for a diagnostic: redacted and bounded. */
  quote(error: unknown): string {
    const status = error instanceof SdkHttpError && typeof error.data?.status === "number" ? `HTTP ${error.data.status}: ` : "";
    // An HTTP error the SDK read the body of (the era probe's answer): the body says what went wrong.
    const text = error instanceof SdkHttpError ? (error.data as { text?: unknown } | undefined)?.text : undefined;
    const body = typeof text === "string" ? ` (the server said: ${text})` : "";
    return this.redactor.quote(`${status}${error instanceof Error ? error.message : String(error)}${body}`);
  }
}
