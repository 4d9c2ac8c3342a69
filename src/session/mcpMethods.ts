/**
 * The handlers of the `mcp.*` methods (M-3, M-5): each reads the session's hub, which validates,
 * bounds and times every call; an interrupted cell aborts its call's signal, which the hub turns
 * into `notifications/cancelled` to the server.
 */
import { route } from "../rpc/index.js";
import type { McpCallResult, McpProgress } from "../mcp/index.js";
import { MCP_CATALOG_WAIT_MS, MCP_METHODS, MCP_PROGRESS_INTERVAL_MS, type McpCatalogServer } from "./rpcApi.js";
import type { SessionMcp } from "./mcp.js";

/**
 * The full descriptions and input schemas `mcp.catalog` sends, in all: the answer must fit one RPC
 * message (1 MiB) with room to spare. Tools past it come with their one-line description and no
 * schema, and get a method taking any keywords.
 */
export const MCP_CATALOG_SCHEMA_BUDGET_BYTES = 512 * 1024;

/** What a finished call was, for a conversation's `mcp` row (M-5). */
export interface McpCallRecord {
  readonly server: string;
  readonly tool: string;
  readonly via: "python" | "tool";
  readonly ms: number;
  readonly bytes: number;
  readonly is_error: boolean;
}

export type McpCallObserver = (record: McpCallRecord) => void;

/** What a cell hears while its call runs: a progress notification, or the status message of the task the call became. */
type CallProgress = McpProgress | { readonly message: string };

/** A progress notification of a cell's call, or its task's status (then no `progress`), as the kernel gets it (MCP_PROGRESS_NOTIFICATION). */
export type McpProgressNotice = CallProgress & {
  readonly cell: string | null;
  readonly name: string;
};

/** Calls `name` through the hub and tells `observers` what it came to; failures reach them too, then rethrow. */
export async function observedCall(
  mcp: SessionMcp, name: string, input: Record<string, unknown>, via: McpCallRecord["via"], signal: AbortSignal, observers: ReadonlySet<McpCallObserver>,
  onProgress?: (progress: CallProgress) => void,
): Promise<McpCallResult> {
  const [server = "", tool = ""] = splitName(name);
  const started = performance.now();
  try {
    // A call the server runs as a task: its status messages go to the log, and to the cell as it runs.
    const onStatus = (text: string) => {
      mcp.log("debug", `mcp ${name}: ${text}`, { server, tool });
      onProgress?.({ message: text });
    };
    const result = await mcp.hub.call(name, input, { signal, via, onStatus, ...(onProgress ? { onProgress } : {}) });
    for (const observer of observers) observer({ server, tool, via, ms: result.ms, bytes: result.bytes, is_error: result.is_error });
    return result;
  } catch (error) {
    const ms = Math.round(performance.now() - started);
    for (const observer of observers) observer({ server, tool, via, ms, bytes: 0, is_error: true });
    throw error;
  }
}

function splitName(name: string): [string, string] {
  const dot = name.indexOf(".");
  return dot < 0 ? [name, ""] : [name.slice(0, dot), name.slice(dot + 1)];
}

async function catalog(mcp: SessionMcp, only: string | undefined): Promise<{ servers: McpCatalogServer[] }> {
  await mcp.settled(MCP_CATALOG_WAIT_MS);
  let budget = MCP_CATALOG_SCHEMA_BUDGET_BYTES;
  const servers: McpCatalogServer[] = [];
  for (const status of mcp.hub.servers()) {
    if (only !== undefined && status.name !== only) continue;
    const tools = status.status !== "running" ? [] : mcp.hub.tools(status.name).map((info) => {
      const detail = mcp.hub.describe(info.name);
      const bytes = Buffer.byteLength(JSON.stringify([detail.full_description, detail.input_schema ?? null]));
      if (bytes > budget) return { tool: info.tool, description: info.description };
      budget -= bytes;
      return { tool: info.tool, description: detail.full_description, input_schema: detail.input_schema };
    });
    servers.push({ name: status.name, status: status.status, tools });
  }
  return { servers };
}

/** The servers as a turn reaches them: the running ones with their tools, calls made `via: "tool"`, and every call observed. */
export function mcpTurnFace(mcp: SessionMcp, observers: Set<McpCallObserver>) {
  return {
    servers: () => mcpTurnServers(mcp),
    call: (qualified: string, args: Record<string, unknown>, signal: AbortSignal) => observedCall(mcp, qualified, args, "tool", signal, observers),
    observe: (observer: McpCallObserver) => {
      observers.add(observer);
      return { dispose: () => void observers.delete(observer) };
    },
  };
}

/** The servers as a turn reaches them (see mcpTurnFace). */
export type McpTurnFace = ReturnType<typeof mcpTurnFace>;

/** The running servers with each allowed tool's input schema, for a turn's message[0] and tool mode. */
function mcpTurnServers(mcp: SessionMcp) {
  return mcp.hub.servers().filter((status) => status.status === "running").map((status) => ({
    name: status.name,
    tools: mcp.hub.tools(status.name).map((info) => ({
      server: status.name,
      tool: info.tool,
      description: info.description,
      inputSchema: (mcp.hub.describe(info.name).input_schema ?? { type: "object" }) as Readonly<Record<string, unknown>>,
    })),
  }));
}

/** Passes on one call's progress at most once per MCP_PROGRESS_INTERVAL_MS: a server may report far more often than a person reads. */
function throttled(name: string, cell: string | undefined, progress: (notice: McpProgressNotice) => void): (update: CallProgress) => void {
  let last = -Infinity;
  return (update) => {
    const now = performance.now();
    if (now - last < MCP_PROGRESS_INTERVAL_MS) return;
    last = now;
    progress({ cell: cell ?? null, name, ...update });
  };
}

/** The `mcp.*` route specs over `mcp`; `observers` hear of every call the kernel makes, `progress` of its servers' progress notifications. */
export function mcpRoutes(mcp: SessionMcp, observers: ReadonlySet<McpCallObserver>, progress: (notice: McpProgressNotice) => void) {
  return [
    route(MCP_METHODS.servers, async () => ({ servers: mcp.hub.servers() })),
    route(MCP_METHODS.tools, async ({ server }) => ({ tools: mcp.hub.tools(server) })),
    route(MCP_METHODS.describe, async ({ name }) => mcp.hub.describe(name)),
    route(MCP_METHODS.call, ({ name, arguments: input }, context) =>
      observedCall(mcp, name, input ?? {}, "python", context.signal, observers, throttled(name, context.cell, progress))),
    route(MCP_METHODS.read, ({ uri, server }, context) => mcp.hub.read(uri, server, context.signal)),
    route(MCP_METHODS.catalog, ({ server }) => catalog(mcp, server)),
  ];
}
