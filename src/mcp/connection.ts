/**
 * One live connection to a server (M-2, M-5): the SDK Client over our stdio or HTTP transport,
 * initialized and its tool list read within the startup deadline, then calls and list refreshes.
 * A connection is never reused after it closed; the server that owns it makes a new one.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPError, type StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ErrorCode, McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { AppError } from "../errors/index.js";
import type { Log } from "../platform/index.js";
import { toolPolicy } from "./glob.js";
import { closeHttp, httpTransport } from "./httpTransport.js";
import { MAX_MCP_TOOL_LIST_PAGES } from "./limits.js";
import { Redactor } from "./redact.js";
import type { ResolvedServer } from "./resolve.js";
import { callResult, type McpCallResult } from "./result.js";
import { McpOversizeError, StdioTransport } from "./stdioTransport.js";
import { argumentErrors, readToolList, type ToolList } from "./toolList.js";

/** The name and version albedo gives in initialize. */
export interface McpClientInfo {
  readonly name: string;
  readonly version: string;
}

export interface ConnectionOptions {
  readonly log: Log;
  readonly clientInfo: McpClientInfo;
  /** Called once when the connection closed by itself (the process exited, the stream broke). */
  readonly onClosed: () => void;
  /** Called after a tools/list_changed notification refreshed the list. */
  readonly onToolsChanged: () => void;
}

// tools/list read leniently: each tool is checked on its own, so one bad tool is a diagnostic
// and not a failed list.
const LenientToolList = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/** Why a server did not start; `retry` is false when starting again cannot help (its deadline passed, its command is missing). */
export class McpStartError extends Error {
  override readonly name = "McpStartError";
  constructor(message: string, readonly retry: boolean, readonly stderr: readonly string[]) {
    super(message);
  }
}

export class Connection {
  private closing = false;
  private refreshing: Promise<void> | undefined;
  private list: ToolList = { tools: new Map(), diagnostics: [] };

  private constructor(
    readonly resolved: ResolvedServer,
    readonly redactor: Redactor,
    private readonly client: Client,
    private readonly transport: StdioTransport | StreamableHTTPClientTransport,
    private readonly options: ConnectionOptions,
  ) {}

  /** Connects and reads the tool list within `resolved.startupTimeoutMs` (or until `stop` aborts); throws McpStartError (redacted) when it cannot. */
  static async open(resolved: ResolvedServer, options: ConnectionOptions, stop: AbortSignal): Promise<Connection> {
    const redactor = new Redactor(resolved.secrets);
    const { launch } = resolved;
    const transport = launch.kind === "stdio" ? new StdioTransport({ server: resolved.name, launch, log: options.log, redactor }) : httpTransport(launch);
    const client = new Client({ name: options.clientInfo.name, version: options.clientInfo.version }, { capabilities: {} });
    const connection = new Connection(resolved, redactor, client, transport, options);
    const deadline = AbortSignal.timeout(resolved.startupTimeoutMs);
    const signal = AbortSignal.any([deadline, stop]);
    try {
      await client.connect(transport, { signal, timeout: resolved.startupTimeoutMs });
      client.onclose = () => connection.closed();
      connection.list = await connection.readTools(signal);
    } catch (error) {
      await connection.close();
      // A spawn failure carries a string code (ENOENT, EACCES): trying again cannot help; nor
      // can it for an HTTP server that answered (an error status, a redirect) or is not there.
      const retry = launch.kind === "stdio" && !signal.aborted && typeof (error as { code?: unknown }).code !== "string";
      throw new McpStartError(connection.startupProblem(error, deadline), retry, connection.stderrTail());
    }
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => connection.refresh());
    return connection;
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

  /** Calls `tool` (known and allowed) with checked arguments; throws AppError as McpHub.call documents. */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpCallResult> {
    const qualified = `${this.resolved.name}.${tool}`;
    const entry = this.list.tools.get(tool)!;
    if (entry.validate === undefined) throw new AppError("conflict", `${qualified} cannot be called: ${entry.problem}`);
    if (!entry.validate(args)) throw new AppError("invalid_params", `arguments of ${qualified} do not match its input schema: ${argumentErrors(entry.validate)}`);
    if (signal.aborted) throw new AppError("cancelled", `the call of ${qualified} was cancelled`);
    const started = Date.now();
    let raw;
    try {
      raw = await this.client.request({ method: "tools/call", params: { name: tool, arguments: args } }, CallToolResultSchema, { signal, timeout: this.resolved.callTimeoutMs });
    } catch (error) {
      return this.callFailure(qualified, error, signal, Date.now() - started);
    }
    return callResult(qualified, raw, Date.now() - started, this.redactor);
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
    if (signal.aborted) return `did not answer initialize and tools/list within ${this.resolved.startupTimeoutMs} ms (startup_timeout_ms)`;
    const broken = this.transport instanceof StdioTransport ? this.transport.broken : undefined;
    return this.quote(broken ?? error);
  }

  private callFailure(qualified: string, error: unknown, signal: AbortSignal, ms: number): McpCallResult {
    const broken = this.transport instanceof StdioTransport ? this.transport.broken : undefined;
    if (broken instanceof McpOversizeError || error instanceof McpOversizeError) {
      throw new AppError("limit_exceeded", `the answer to ${qualified} is over the read bound: ${this.quote(broken ?? error)}; the server is restarted`);
    }
    if (signal.aborted) throw new AppError("cancelled", `the call of ${qualified} was cancelled`);
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      throw new AppError("timeout", `${qualified} did not answer within ${this.resolved.callTimeoutMs} ms (call_timeout_ms)`);
    }
    if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
      throw new AppError("conflict", `${this.resolved.name} closed its connection during the call of ${qualified}`);
    }
    // A JSON-RPC error from the server is the tool failing: returned as an error result.
    return { value: null, images: [], is_error: true, error_text: this.quote(error), bytes: 0, ms };
  }

  /** An error's message fit for a diagnostic: redacted and bounded. */
  quote(error: unknown): string {
    const status = error instanceof StreamableHTTPError && error.code !== undefined && error.code > 0 ? `HTTP ${error.code}: ` : "";
    return this.redactor.quote(`${status}${error instanceof Error ? error.message : String(error)}`);
  }
}
