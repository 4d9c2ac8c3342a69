/**
 * The Streamable HTTP transport of a server (M-2): the SDK's client transport with the resolved
 * headers and a fetch of our own that never follows a redirect (the headers carry secrets and
 * must not go to another host) and bounds every body it hands the SDK.
 */
import { StreamableHTTPClientTransport, type FetchLike } from "@modelcontextprotocol/client";
import { MAX_MCP_HTTP_ERROR_BODY_BYTES, MCP_HTTP_CLOSE_TIMEOUT_MS, MCP_MAX_MESSAGE_BYTES } from "./limits.js";
import type { McpHttpLaunch } from "./resolve.js";
import { McpOversizeError } from "./stdioTransport.js";

/** A transport to `launch.url` sending `launch.headers` with every request. */
export function httpTransport(launch: McpHttpLaunch): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(launch.url), {
    requestInit: { headers: { ...launch.headers } },
    fetch: boundedFetch,
    reconnectionOptions: { initialReconnectionDelay: 1_000, maxReconnectionDelay: 30_000, reconnectionDelayGrowFactor: 2, maxRetries: 2 },
  });
}

/** Ends an HTTP session: its DELETE within MCP_HTTP_CLOSE_TIMEOUT_MS, then the transport. */
export async function closeHttp(transport: StreamableHTTPClientTransport): Promise<void> {
  const deadline = new Promise<void>((resolve) => setTimeout(resolve, MCP_HTTP_CLOSE_TIMEOUT_MS).unref());
  await Promise.race([transport.terminateSession().catch(() => undefined), deadline]);
  await transport.close();
}

const boundedFetch: FetchLike = async (url, init) => {
  const response = await fetch(url, { ...init, headers: withTaskName(init), redirect: "manual" });
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => undefined);
    throw new Error(`the server answered HTTP ${response.status} redirecting to ${where(response.headers.get("location"), url)}; redirects are not followed (the request's headers would go there)`);
  }
  if (!response.ok) return errorResponse(response);
  if (response.body === null) return response;
  const sse = (response.headers.get("content-type") ?? "").includes("text/event-stream");
  return new Response(response.body.pipeThrough(byteBound(sse)), { status: response.status, statusText: response.statusText, headers: response.headers });
};

/**
 * The request's headers, with `Mcp-Name` set to the task id of a `tasks/*` request (the Tasks
 * extension asks for it, so a balancer routes the request to the server holding the task; the
 * SDK derives the header from `params.name` only).
 */
function withTaskName(init: RequestInit | undefined): RequestInit["headers"] {
  if (typeof init?.body !== "string" || !init.body.includes('"tasks/')) return init?.headers;
  let message: { method?: unknown; params?: { taskId?: unknown } };
  try {
    message = JSON.parse(init.body) as typeof message;
  } catch {
    return init.headers;
  }
  const taskId = message.params?.taskId;
  if (typeof message.method !== "string" || !message.method.startsWith("tasks/") || typeof taskId !== "string" || !/^[\x21-\x7e]{1,512}$/.test(taskId)) return init.headers;
  const headers = new Headers(init.headers);
  headers.set("mcp-name", taskId);
  return headers;
}

/** The origin and path a Location points at; never its query (it may hold a token). */
function where(location: string | null, base: string | URL): string {
  if (location === null) return "nowhere (no Location header)";
  try {
    const target = new URL(location, base);
    return `${target.origin}${target.pathname}`;
  } catch {
    return "an address that is not a URL";
  }
}

/** An error answer with its body cut to MAX_MCP_HTTP_ERROR_BODY_BYTES, so the SDK quotes a bounded text. */
async function errorResponse(response: Response): Promise<Response> {
  const reader = response.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (reader && size < MAX_MCP_HTTP_ERROR_BODY_BYTES) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
  }
  await reader?.cancel().catch(() => undefined);
  const body = Buffer.concat(chunks).subarray(0, MAX_MCP_HTTP_ERROR_BODY_BYTES);
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * Errors a body past MCP_MAX_MESSAGE_BYTES: a JSON body in total, an event stream per event (the
 * count starts again after each blank line), so a long-lived stream of small events goes on.
 */
function byteBound(perEvent: boolean): TransformStream<Uint8Array, Uint8Array> {
  let size = 0;
  return new TransformStream({
    transform(chunk, controller) {
      const boundary = perEvent ? lastBlankLine(chunk) : -1;
      size = boundary >= 0 ? chunk.length - boundary : size + chunk.length;
      if (size > MCP_MAX_MESSAGE_BYTES) {
        controller.error(new McpOversizeError(`the server sent a message over ${MCP_MAX_MESSAGE_BYTES} bytes (MCP_MAX_MESSAGE_BYTES)`));
        return;
      }
      controller.enqueue(chunk);
    },
  });
}

/** The index just past the last "\n\n" in `chunk`, or -1. */
function lastBlankLine(chunk: Uint8Array): number {
  for (let i = chunk.length - 1; i > 0; i--) if (chunk[i] === 10 && (chunk[i - 1] === 10 || (chunk[i - 1] === 13 && chunk[i - 2] === 10))) return i + 1;
  return -1;
}
