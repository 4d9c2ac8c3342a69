import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { APP_ERROR_NUMBERS, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, MAX_CELL_ID_CHARS, PARSE_ERROR, RouteTable, RpcDispatcher } from "../../src/rpc/index.js";
import { decodeMessage, encodeError } from "../../src/rpc/protocol.js";
import { PROPERTY_RUNS } from "./arbitraries.js";
import type { Log } from "../../src/platform/index.js";

const TOKEN = "f".repeat(64);
const STANDARD = [PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR];
const KNOWN_NUMBERS = new Set([...STANDARD, ...Object.values(APP_ERROR_NUMBERS)]);

/** Asserts `text` is one JSON-RPC 2.0 response and returns it parsed. */
function expectResponse(text: string): { id: unknown; result?: unknown; error?: { code: number; message: string } } {
  const message = JSON.parse(text);
  expect(message.jsonrpc).toBe("2.0");
  expect(message.id === null || typeof message.id === "string" || Number.isFinite(message.id)).toBe(true);
  expect("result" in message !== "error" in message).toBe(true);
  if ("error" in message) {
    expect(Number.isInteger(message.error.code)).toBe(true);
    expect(KNOWN_NUMBERS.has(message.error.code)).toBe(true);
    expect(typeof message.error.message).toBe("string");
  }
  return message;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The documented notification shape (docs/rpc.md): valid 2.0 object with a method and no `id` member. */
function isNotification(value: unknown): boolean {
  if (!isRecord(value) || value.jsonrpc !== "2.0" || typeof value.method !== "string" || value.method === "") return false;
  if ("id" in value) return false;
  return value.cell === undefined || (typeof value.cell === "string" && value.cell.length <= MAX_CELL_ID_CHARS);
}

/** Objects shaped almost like requests: every member optional, each drawn from right and wrong values. */
const requestish = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant("2.0"), fc.constant("1.0"), fc.jsonValue()),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null), fc.double(), fc.jsonValue()),
    method: fc.oneof(fc.constantFrom("echo", "missing", "", "albedo/hello", "__proto__", "constructor", "toString"), fc.jsonValue()),
    params: fc.oneof(fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue()), fc.jsonValue()),
    cell: fc.oneof(fc.string({ maxLength: 10 }), fc.string({ minLength: MAX_CELL_ID_CHARS + 1, maxLength: MAX_CELL_ID_CHARS + 2 }), fc.jsonValue()),
  },
  { requiredKeys: [] },
);

/** Well-formed calls and notifications, so the handler path and the no-reply path are both exercised. */
const wellFormed = fc
  .record({
    id: fc.option(fc.oneof(fc.integer(), fc.string({ maxLength: 8 })), { nil: undefined }),
    method: fc.constantFrom("echo", "echo", "missing", "albedo/hello"),
    params: fc.option(fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue()), { nil: undefined }),
    cell: fc.option(fc.string({ maxLength: 10 }), { nil: undefined }),
  })
  .map((fields) => ({ jsonrpc: "2.0", ...fields }));

/** One inbound frame body: raw bytes, any JSON text, a near-request, or a well-formed message. */
const body = fc.oneof(
  wellFormed.map((value) => Buffer.from(JSON.stringify(value))),
  fc.uint8Array({ maxLength: 120 }).map((bytes) => Buffer.from(bytes)),
  fc.jsonValue().map((value) => Buffer.from(JSON.stringify(value) ?? "null")),
  requestish.map((value) => Buffer.from(JSON.stringify(value))),
  fc.string({ unit: "binary", maxLength: 60 }).map((text) => Buffer.from(text)),
);

const quietLogger: Log = () => undefined;

/** A dispatcher with one `echo` route that records what it was handed. */
function harness() {
  const sent: string[] = [];
  const handled: unknown[] = [];
  const dispatcher = new RpcDispatcher({
    token: TOKEN,
    logger: quietLogger,
    send: (_peer, text) => sent.push(text),
    routes: RouteTable.of({
      echo: async (params, context) => {
        handled.push({ params, method: context.method, cell: context.cell });
        return { echoed: params };
      },
    }),
  });
  return { dispatcher, sent, handled };
}

/** Lets the dispatcher's promise chains settle. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("K-4 B JSON-RPC decoder", () => {
  it("decodeMessage never throws and every invalid frame encodes to a well-formed error response", () => {
    fc.assert(
      fc.property(body, (frame) => {
        const decoded = decodeMessage(frame);
        if (decoded.kind === "invalid") {
          expect(STANDARD).toContain(decoded.error.code);
          expectResponse(encodeError(decoded.id, decoded.error));
        } else if (decoded.kind === "request") {
          expect(isRecord(decoded.request.params)).toBe(true);
          expect(typeof decoded.request.method).toBe("string");
        }
      }),
      { numRuns: PROPERTY_RUNS * 3 },
    );
  });

  it("through the dispatcher: one well-formed reply per non-notification, none per notification, handlers see only validated shapes", async () => {
    const seen = { handled: 0, silent: 0 };
    await fc.assert(
      fc.asyncProperty(body, async (frame) => {
        const { dispatcher, sent, handled } = harness();
        dispatcher.receive("peer", [Buffer.from(TOKEN), frame]);
        await settle();
        await settle();
        dispatcher.close();
        let parsed: unknown;
        try {
          parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(frame));
        } catch {
          parsed = undefined;
        }
        expect(sent.length).toBe(isNotification(parsed) ? 0 : 1);
        seen.handled += handled.length;
        seen.silent += sent.length === 0 ? 1 : 0;
        const reply = sent.length === 1 ? expectResponse(sent[0]!) : undefined;
        for (const call of handled as { params: unknown; method: string; cell: unknown }[]) {
          expect(isRecord(call.params)).toBe(true);
          expect(call.method).toBe("echo");
          expect(call.cell === undefined || typeof call.cell === "string").toBe(true);
          expect(isRecord(parsed) && parsed.jsonrpc === "2.0" && parsed.method === "echo").toBe(true);
          expect(reply?.result).toEqual({ echoed: call.params });
        }
        if (reply !== undefined && isRecord(parsed) && (typeof parsed.id === "string" || Number.isFinite(parsed.id)) && "error" in reply) {
          // A readable id is echoed on errors raised after decoding started.
          if (reply.error!.code !== PARSE_ERROR) expect(reply.id).toBe(parsed.id);
        }
      }),
      { numRuns: PROPERTY_RUNS * 2 },
    );
    expect(seen.handled).toBeGreaterThan(0);
    expect(seen.silent).toBeGreaterThan(0);
  });

  it("a frame list that is not exactly [token, body] is refused with forbidden and reaches no handler", async () => {
    const token = fc.oneof(fc.constant(Buffer.from(TOKEN)), fc.uint8Array({ maxLength: 70 }).map((b) => Buffer.from(b)), fc.constant(Buffer.from(TOKEN.toUpperCase())));
    const frames = fc.array(fc.oneof(token, body), { maxLength: 4 }).filter((list) => !(list.length === 2 && list[0]!.equals(Buffer.from(TOKEN))));
    await fc.assert(
      fc.asyncProperty(frames, async (list) => {
        const { dispatcher, sent, handled } = harness();
        dispatcher.receive("peer", list);
        await settle();
        dispatcher.close();
        expect(handled).toEqual([]);
        expect(sent).toHaveLength(1);
        expect(expectResponse(sent[0]!).error?.code).toBe(APP_ERROR_NUMBERS.forbidden);
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });
});
