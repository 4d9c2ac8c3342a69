/**
 * A real OpenAI-compatible HTTP server for tests: `POST /v1/chat/completions` on 127.0.0.1, port 0,
 * answering each request with the next scripted reply (SSE stream or plain JSON) or a fault. It
 * records every request, so tests can check what the real `openai` client sent.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeToolCall {
  readonly id?: string;
  readonly name: string;
  readonly arguments: string;
}

export interface FakeUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly prompt_tokens_details?: { readonly cached_tokens?: number };
}

/** One scripted answer. */
export type FakeReply =
  /** A model reply. `pieces`: how many chunks each text and each argument string is cut into (default: by word). */
  | {
      readonly kind: "reply";
      readonly text?: string;
      readonly toolCalls?: readonly FakeToolCall[];
      readonly pieces?: number;
      readonly format?: "sse" | "json";
      readonly usage?: FakeUsage;
      /** Default "tool_calls" with calls, else "stop"; null sends none at all. */
      readonly finishReason?: string | null;
    }
  /** An HTTP status with a body (a function of the request, e.g. to echo a header back). */
  | { readonly kind: "status"; readonly status: number; readonly body?: string | ((request: RecordedRequest) => string); readonly headers?: Readonly<Record<string, string>> }
  /** Reads the request and never answers. */
  | { readonly kind: "hang" }
  /** Streams the first `deltas` words of `text`, then destroys the socket or stays silent. */
  | { readonly kind: "partial"; readonly text: string; readonly deltas: number; readonly then: "destroy" | "hang" }
  /** `bytes` of reply: many 16 KiB text deltas, one endless SSE line, or one JSON body. */
  | { readonly kind: "huge"; readonly bytes: number; readonly as: "deltas" | "one_line" | "json" }
  /** Exactly this body with this content type. */
  | { readonly kind: "raw"; readonly contentType: string; readonly body: string; readonly status?: number };

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly authorization: string | undefined;
  /** The parsed JSON body (undefined when it was not JSON); `any` so tests can read its fields directly. */
  readonly body: any;
  /** Resolves once the exchange is over: "aborted" when the client went away before the answer ended. */
  readonly closed: Promise<"finished" | "aborted">;
}

/** The fake; its base URL ends in /v1. */
export type FakeOpenAI = ScriptedServer<FakeReply, RecordedRequest>;

const COMPLETIONS_PATH = "/v1/chat/completions";
/** Request bodies the fake reads at most. */
const MAX_FAKE_BODY_BYTES = 16 * 1024 * 1024;
/** Text in one delta of a "huge" reply. */
const HUGE_PIECE = "x".repeat(16 * 1024);

/** Starts a fake server on 127.0.0.1 at a free port. */
export function startFakeOpenAI(): Promise<FakeOpenAI> {
  return scriptedServer(handle, "/v1");
}

/** A fake model server as every fake is: its queue of scripted replies, the requests it recorded, its base URL. */
export interface ScriptedServer<Reply, Recorded> {
  readonly baseUrl: string;
  readonly requests: Recorded[];
  enqueue(...replies: Reply[]): void;
  /** Replies not yet used. */
  pending(): number;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 at a free port; `handle` answers each request from the queue and records it. */
export async function scriptedServer<Reply, Recorded>(
  handle: (req: IncomingMessage, res: ServerResponse, queue: Reply[], requests: Recorded[]) => Promise<void>,
  basePath: string,
): Promise<ScriptedServer<Reply, Recorded>> {
  const queue: Reply[] = [];
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    handle(req, res, queue, requests).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${basePath}`,
    requests,
    enqueue: (...replies) => void queue.push(...replies),
    pending: () => queue.length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port on 127.0.0.1 that nothing listens on (just bound and released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function handle(req: IncomingMessage, res: ServerResponse, queue: FakeReply[], requests: RecordedRequest[]): Promise<void> {
  const text = await readBody(req);
  const closed = new Promise<"finished" | "aborted">((resolve) => res.on("close", () => resolve(res.writableFinished ? "finished" : "aborted")));
  const record: RecordedRequest = {
    method: req.method ?? "",
    path: req.url ?? "",
    headers: req.headers,
    authorization: req.headers.authorization,
    body: parseJson(text),
    closed,
  };
  requests.push(record);
  if (req.method !== "POST" || req.url !== COMPLETIONS_PATH) return sendJson(res, 404, { error: { message: `fake server: no route ${req.method} ${req.url}` } });
  const reply = queue.shift();
  if (!reply) return sendJson(res, 500, { error: { message: "fake server: no reply queued" } });
  await answer(reply, record, res);
}

async function answer(reply: FakeReply, record: RecordedRequest, res: ServerResponse): Promise<void> {
  switch (reply.kind) {
    case "reply":
      return reply.format === "json" ? sendJson(res, 200, completionOf(reply)) : sendEvents(res, chunksOf(reply));
    case "status": {
      const body = typeof reply.body === "function" ? reply.body(record) : (reply.body ?? JSON.stringify({ error: { message: `fake status ${reply.status}` } }));
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      return void res.end(body);
    }
    case "hang":
      return;
    case "partial": {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const delta of words(reply.text).slice(0, reply.deltas)) res.write(event(chunk({ content: delta })));
      if (reply.then === "destroy") setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    case "huge":
      return sendHuge(res, reply.bytes, reply.as);
    case "raw":
      res.writeHead(reply.status ?? 200, { "content-type": reply.contentType });
      return void res.end(reply.body);
  }
}

type ReplySpec = Extract<FakeReply, { kind: "reply" }>;

/** The SSE chunks of a reply: text deltas, each call's name then its argument pieces, the finish, the usage. */
function chunksOf(reply: ReplySpec): unknown[] {
  const chunks: unknown[] = [chunk({ role: "assistant", content: "" })];
  for (const delta of split(reply.text ?? "", reply.pieces)) chunks.push(chunk({ content: delta }));
  (reply.toolCalls ?? []).forEach((call, index) => {
    chunks.push(chunk({ tool_calls: [{ index, id: call.id ?? `call_fake_${index}`, type: "function", function: { name: call.name, arguments: "" } }] }));
    for (const piece of split(call.arguments, reply.pieces)) chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  const finish = finishOf(reply);
  if (finish !== null) chunks.push(chunk({}, finish));
  if (reply.usage) chunks.push({ id: "chatcmpl-fake", object: "chat.completion.chunk", model: "fake", choices: [], usage: reply.usage });
  return chunks;
}

function completionOf(reply: ReplySpec): unknown {
  const toolCalls = (reply.toolCalls ?? []).map((call, index) => ({ id: call.id ?? `call_fake_${index}`, type: "function", function: { name: call.name, arguments: call.arguments } }));
  const message = { role: "assistant", content: reply.text ?? null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) };
  return { id: "chatcmpl-fake", object: "chat.completion", model: "fake", choices: [{ index: 0, message, finish_reason: finishOf(reply) }], ...(reply.usage ? { usage: reply.usage } : {}) };
}

function finishOf(reply: ReplySpec): string | null {
  if (reply.finishReason !== undefined) return reply.finishReason;
  return (reply.toolCalls ?? []).length > 0 ? "tool_calls" : "stop";
}

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): unknown {
  return { id: "chatcmpl-fake", object: "chat.completion.chunk", model: "fake", choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

function event(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

function sendEvents(res: ServerResponse, chunks: readonly unknown[]): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const item of chunks) res.write(event(item));
  res.end("data: [DONE]\n\n");
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

async function sendHuge(res: ServerResponse, bytes: number, as: "deltas" | "one_line" | "json"): Promise<void> {
  res.writeHead(200, { "content-type": as === "json" ? "application/json" : "text/event-stream" });
  const opening = as === "deltas" ? "" : as === "json" ? '{"choices":[{"index":0,"message":{"content":"' : 'data: {"choices":[{"index":0,"delta":{"content":"';
  if (!(await write(res, opening))) return;
  for (let sent = 0; sent < bytes; sent += HUGE_PIECE.length) {
    const piece = as === "deltas" ? event(chunk({ content: HUGE_PIECE })) : HUGE_PIECE;
    if (!(await write(res, piece))) return;
  }
  res.end(as === "deltas" ? event(chunk({}, "stop")) + "data: [DONE]\n\n" : as === "json" ? '"},"finish_reason":"stop"}]}' : '"}}]}\n\n');
}

/** Writes with backpressure; false once the client has gone. */
async function write(res: ServerResponse, text: string): Promise<boolean> {
  if (res.destroyed) return false;
  if (res.write(text)) return true;
  return new Promise((resolve) => {
    const done = (ok: boolean) => () => {
      res.off("drain", onDrain);
      res.off("close", onClose);
      resolve(ok);
    };
    const onDrain = done(true);
    const onClose = done(false);
    res.on("drain", onDrain);
    res.on("close", onClose);
  });
}

/** Words, each with the whitespace before it (they join back to `text`). */
export function words(text: string): string[] {
  return text.match(/\s*\S+\s*$|\s*\S+/g) ?? [];
}

/** `text` in `pieces` nearly equal parts, or by word when `pieces` is unset. */
export function split(text: string, pieces: number | undefined): string[] {
  if (text.length === 0) return [];
  if (pieces === undefined) return words(text);
  const size = Math.ceil(text.length / pieces);
  const parts: string[] = [];
  for (let start = 0; start < text.length; start += size) parts.push(text.slice(start, start + size));
  return parts;
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of req as AsyncIterable<Buffer>) {
    size += part.length;
    if (size > MAX_FAKE_BODY_BYTES) throw new Error("fake server: request body too large");
    parts.push(part);
  }
  return Buffer.concat(parts).toString("utf8");
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
