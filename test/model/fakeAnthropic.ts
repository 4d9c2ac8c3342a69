/**
 * A real Messages API HTTP server for tests: `POST /v1/messages` on 127.0.0.1, port 0, answering
 * each request with the next scripted reply (SSE events as the API sends them, or one JSON
 * message) or a fault. It records every request, its raw body included, so tests can check what
 * the real `@anthropic-ai/sdk` client sent, byte for byte.
 */
import { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import { parseJson, readBody, scriptedServer, sendJson, split, type ScriptedServer } from "./fakeOpenAI.js";

export interface FakeToolUse {
  readonly id?: string;
  readonly name: string;
  /** The input as JSON text, sent in `input_json_delta` pieces (it may be malformed on purpose). */
  readonly input: string;
}

export interface FakeAnthropicUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cache_creation_input_tokens?: number;
  readonly cache_read_input_tokens?: number;
}

export type FakeAnthropicReply =
  /** A model reply: text then tool calls. `pieces`: how many deltas each text and input is cut into (default: by word). */
  | {
      readonly kind: "reply";
      readonly text?: string;
      readonly toolUses?: readonly FakeToolUse[];
      readonly pieces?: number;
      readonly format?: "sse" | "json";
      readonly usage?: FakeAnthropicUsage;
      /** Default "tool_use" with calls, else "end_turn"; null sends no message_delta at all. */
      readonly stopReason?: string | null;
      /** The usage message_delta carries (default: the output tokens of `usage`). */
      readonly finalUsage?: Partial<FakeAnthropicUsage>;
    }
  /** An HTTP status with a body (a function of the request, e.g. to echo a header back). */
  | { readonly kind: "status"; readonly status: number; readonly body?: string | ((request: RecordedAnthropicRequest) => string); readonly headers?: Readonly<Record<string, string>> }
  /** Starts a tool call, sends the first `pieces` of its input in input_json_delta events, then destroys the socket. */
  | { readonly kind: "cut_in_tool"; readonly input: string; readonly pieces: number }
  /** Reads the request and never answers. */
  | { readonly kind: "hang" }
  /** Exactly this body with this content type. */
  | { readonly kind: "raw"; readonly contentType: string; readonly body: string; readonly status?: number };

export interface RecordedAnthropicRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The body as sent. */
  readonly raw: string;
  /** The parsed JSON body; `any` so tests can read its fields directly. */
  readonly body: any;
  /** performance.now() when the whole body had arrived, and when the answer to it was written (benches time the client between them). */
  readonly receivedAt: number;
  answeredAt?: number;
}

/** The fake; its base URL is the server's root (the SDK appends /v1/messages). */
export type FakeAnthropic = ScriptedServer<FakeAnthropicReply, RecordedAnthropicRequest>;

const MESSAGES_PATH = "/v1/messages";
const ZERO_USAGE: FakeAnthropicUsage = { input_tokens: 0, output_tokens: 0 };

/** Starts a fake Messages API server on 127.0.0.1 at a free port (the SDK appends /v1/messages to its base URL). */
export function startFakeAnthropic(): Promise<FakeAnthropic> {
  return scriptedServer(handle, "");
}

async function handle(req: IncomingMessage, res: ServerResponse, queue: FakeAnthropicReply[], requests: RecordedAnthropicRequest[]): Promise<void> {
  const raw = await readBody(req);
  const record: RecordedAnthropicRequest = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, raw, body: parseJson(raw), receivedAt: performance.now() };
  requests.push(record);
  if (req.method !== "POST" || req.url !== MESSAGES_PATH) return sendJson(res, 404, errorBody("not_found_error", `fake server: no route ${req.method} ${req.url}`));
  const reply = queue.shift();
  if (!reply) return sendJson(res, 500, errorBody("api_error", "fake server: no reply queued"));
  answer(reply, record, res);
  record.answeredAt = performance.now();
}

function answer(reply: FakeAnthropicReply, record: RecordedAnthropicRequest, res: ServerResponse): void {
  switch (reply.kind) {
    case "reply":
      return reply.format === "json" ? sendJson(res, 200, messageOf(reply)) : sendEvents(res, eventsOf(reply));
    case "status": {
      const body = typeof reply.body === "function" ? reply.body(record) : (reply.body ?? JSON.stringify(errorBody("api_error", `fake status ${reply.status}`)));
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      return void res.end(body);
    }
    case "cut_in_tool": {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const events = [start(ZERO_USAGE), { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_cut", name: "python", input: {} } }];
      for (const piece of split(reply.input, reply.pieces * 2).slice(0, reply.pieces)) events.push(jsonDelta(0, piece));
      for (const item of events) res.write(event(item));
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    case "hang":
      return;
    case "raw":
      res.writeHead(reply.status ?? 200, { "content-type": reply.contentType });
      return void res.end(reply.body);
  }
}

type ReplySpec = Extract<FakeAnthropicReply, { kind: "reply" }>;

/** The events of a reply, as the API orders them: message_start, each block's start, deltas and stop, message_delta, message_stop. */
function eventsOf(reply: ReplySpec): Record<string, unknown>[] {
  const usage = reply.usage ?? ZERO_USAGE;
  const events: Record<string, unknown>[] = [start({ ...usage, output_tokens: 1 }), { type: "ping" }];
  let index = 0;
  if (reply.text) {
    events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
    for (const piece of split(reply.text, reply.pieces)) events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } });
    events.push({ type: "content_block_stop", index });
    index += 1;
  }
  (reply.toolUses ?? []).forEach((call, position) => {
    events.push({ type: "content_block_start", index, content_block: { type: "tool_use", id: call.id ?? `toolu_fake_${position}`, name: call.name, input: {} } });
    for (const piece of split(call.input, reply.pieces)) events.push(jsonDelta(index, piece));
    events.push({ type: "content_block_stop", index });
    index += 1;
  });
  const stop = stopOf(reply);
  if (stop !== null) events.push({ type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: reply.finalUsage ?? { output_tokens: usage.output_tokens } });
  events.push({ type: "message_stop" });
  return events;
}

function messageOf(reply: ReplySpec): unknown {
  const content: unknown[] = [];
  if (reply.text) content.push({ type: "text", text: reply.text });
  (reply.toolUses ?? []).forEach((call, position) => content.push({ type: "tool_use", id: call.id ?? `toolu_fake_${position}`, name: call.name, input: JSON.parse(call.input) }));
  return { id: "msg_fake", type: "message", role: "assistant", model: "fake", content, stop_reason: stopOf(reply), stop_sequence: null, usage: fullUsage(reply.usage ?? ZERO_USAGE) };
}

function stopOf(reply: ReplySpec): string | null {
  if (reply.stopReason !== undefined) return reply.stopReason;
  return (reply.toolUses ?? []).length > 0 ? "tool_use" : "end_turn";
}

function start(usage: FakeAnthropicUsage): Record<string, unknown> {
  return { type: "message_start", message: { id: "msg_fake", type: "message", role: "assistant", model: "fake", content: [], stop_reason: null, stop_sequence: null, usage: fullUsage(usage) } };
}

function fullUsage(usage: FakeAnthropicUsage): Record<string, number> {
  return { cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...usage };
}

function jsonDelta(index: number, partial: string): Record<string, unknown> {
  return { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: partial } };
}

/** An error body as the API sends one. */
export function errorBody(type: string, message: string): Record<string, unknown> {
  return { type: "error", error: { type, message } };
}

/** An SSE event, named by its `type` as the API names them. */
export function event(data: Record<string, unknown>): string {
  return `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;
}

function sendEvents(res: ServerResponse, events: readonly Record<string, unknown>[]): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const item of events) res.write(event(item));
  res.end();
}
