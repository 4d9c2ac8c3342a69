import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { AppError } from "../../src/errors/index.js";
import {
  APP_ERROR_NUMBERS,
  INTERNAL_ERROR,
  INVALID_PARAMS,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  PARSE_ERROR,
  RPC_CANCEL_METHOD,
  RPC_MAX_MESSAGE_BYTES,
  RPC_MAX_REFUSAL_PEERS,
  RPC_REFUSAL_WINDOW_MS,
  RPC_MAX_PARAMS_DEPTH,
  RouteTable,
  RpcDispatcher,
  answers,
  appErrorCode,
  parametersOf,
  route,
  type CallContext,
  type RouteHandler,
} from "../../src/rpc/index.js";
import { recordingLogger } from "./helpers.js";
import { poll } from "../support/poll.js";

const TOKEN = "a".repeat(64);

const open: RpcDispatcher[] = [];
afterEach(() => {
  for (const d of open.splice(0)) d.close();
});

/** An in-memory peer: frames go straight into the dispatcher, replies land in `sent`. */
function pair(routes: RouteTable, callTimeoutMs?: number) {
  const sent: { peer: string; message: any }[] = [];
  const { logger, entries } = recordingLogger();
  const dispatcher = new RpcDispatcher({
    token: TOKEN,
    routes,
    logger,
    callTimeoutMs,
    send: (peer, text) => sent.push({ peer, message: JSON.parse(text) }),
  });
  open.push(dispatcher);
  const raw = (body: string | Buffer, token = TOKEN, peer = "p1") =>
    dispatcher.receive(peer, [Buffer.from(token), Buffer.isBuffer(body) ? body : Buffer.from(body)]);
  const call = (id: number, method: string, params?: unknown, cell?: string) =>
    raw(JSON.stringify({ jsonrpc: "2.0", id, method, params, cell }));
  const reply = async (id: number) => {
    await poll(() => sent.some((s) => s.message.id === id));
    return sent.find((s) => s.message.id === id)!.message;
  };
  return { dispatcher, sent, entries, raw, call, reply };
}

/** A handler that waits until released (or aborted), recording its context. */
function gate(answer: unknown) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const contexts: CallContext[] = [];
  const handler: RouteHandler = async (_params, context) => {
    contexts.push(context);
    await Promise.race([
      released,
      new Promise((_resolve, reject) => context.signal.addEventListener("abort", () => reject(context.signal.reason))),
    ]);
    return answer;
  };
  return { handler, release, contexts };
}

describe("K-4 error code table", () => {
  it("maps every AppError code to one fixed number in the application range", () => {
    const numbers = Object.values(APP_ERROR_NUMBERS);
    expect(new Set(numbers).size).toBe(numbers.length);
    for (const [code, number] of Object.entries(APP_ERROR_NUMBERS)) {
      expect(number).toBeLessThanOrEqual(-32001);
      expect(number).toBeGreaterThanOrEqual(-32099);
      expect(appErrorCode(number)).toBe(code);
    }
    expect(APP_ERROR_NUMBERS.not_found).toBe(-32002);
    expect(appErrorCode(-32601)).toBeUndefined();
  });
});

describe("K-4 JSON-RPC decoding", () => {
  it("answers a request with its handler's result and passes the cell tag", async () => {
    const seen: CallContext[] = [];
    const p = pair(RouteTable.of({ echo: async (params, context) => (seen.push(context), params) }));
    p.call(1, "echo", { x: 1 }, "cell-1");
    expect(await p.reply(1)).toEqual({ jsonrpc: "2.0", id: 1, result: { x: 1 } });
    expect(seen[0]?.cell).toBe("cell-1");
    expect(seen[0]?.method).toBe("echo");
  });

  it("answers -32601 for an unknown method", async () => {
    const p = pair(RouteTable.empty());
    p.call(2, "nope.nothing");
    expect((await p.reply(2)).error).toMatchObject({ code: METHOD_NOT_FOUND, message: expect.stringContaining("nope.nothing") });
  });

  it("answers -32700 for malformed JSON or UTF-8 and -32600 for a bad shape, never crashing", async () => {
    const p = pair(RouteTable.empty());
    p.raw("{not json");
    p.raw("[1,2]");
    p.raw(JSON.stringify({ jsonrpc: "1.0", id: 3, method: "x" }));
    p.raw(JSON.stringify({ jsonrpc: "2.0", id: 4, method: 7 }));
    p.raw(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "x", cell: 12 }));
    p.raw(Buffer.from([0xff, 0xfe, 0x00]));
    p.raw(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"'), Buffer.from([0xc3]), Buffer.from('"}')]));
    await poll(() => p.sent.length === 7);
    const codes = p.sent.map((s) => s.message.error.code);
    expect(codes).toEqual([PARSE_ERROR, INVALID_REQUEST, INVALID_REQUEST, INVALID_REQUEST, INVALID_REQUEST, PARSE_ERROR, PARSE_ERROR]);
    expect(p.sent[6]?.message.error.message).toContain("UTF-8");
    expect(p.sent[2]?.message.id).toBe(3);
  });

  it("answers -32602 when params are not a named-parameter object", async () => {
    const p = pair(RouteTable.of({ echo: async (params) => params }));
    p.call(6, "echo", [1, 2]);
    expect((await p.reply(6)).error.code).toBe(INVALID_PARAMS);
  });

  it("maps a handler's AppError to its application code with message and data", async () => {
    const p = pair(
      RouteTable.of({
        read: async () => {
          throw new AppError("reload_required", "skill demo changed on disk", { skill: "demo" });
        },
      }),
    );
    p.call(7, "read", {});
    expect((await p.reply(7)).error).toEqual({ code: -32001, message: "skill demo changed on disk", data: { skill: "demo" } });
  });

  it("answers -32603 for a handler that throws before returning a promise, and keeps serving", async () => {
    const throwing = (() => {
      throw new Error("sync failure");
    }) as unknown as RouteHandler;
    const p = pair(RouteTable.of({ sync: throwing, echo: async (params) => params }));
    expect(() => p.call(24, "sync", {})).not.toThrow();
    expect((await p.reply(24)).error).toEqual({ code: INTERNAL_ERROR, message: "internal error while serving sync" });
    p.call(25, "echo", { x: 1 });
    expect((await p.reply(25)).result).toEqual({ x: 1 });
  });

  it("answers -32603 with a generic message for other exceptions and logs the detail", async () => {
    const p = pair(
      RouteTable.of({
        boom: async () => {
          throw new Error("secret /home/path detail");
        },
      }),
    );
    p.call(8, "boom", {});
    const error = (await p.reply(8)).error;
    expect(error.code).toBe(INTERNAL_ERROR);
    expect(JSON.stringify(error)).not.toContain("secret");
    expect(p.entries.some((e) => e.level === "error" && String(e.fields?.error).includes("secret"))).toBe(true);
  });

  it("ignores notifications other than hello without replying", async () => {
    const p = pair(RouteTable.of({ echo: async (params) => params }));
    p.raw(JSON.stringify({ jsonrpc: "2.0", method: "echo", params: {} }));
    p.call(9, "echo", {});
    await p.reply(9);
    expect(p.sent).toHaveLength(1);
  });
});

describe("K-6 token check", () => {
  it("refuses a wrong or missing token with forbidden, runs nothing, and logs", async () => {
    let ran = 0;
    const p = pair(RouteTable.of({ echo: async () => ++ran }));
    p.raw(JSON.stringify({ jsonrpc: "2.0", id: 10, method: "echo" }), "b".repeat(64));
    p.dispatcher.receive("p1", [Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 11, method: "echo" }))]);
    await poll(() => p.sent.length === 2);
    expect(p.sent.map((s) => s.message.error.code)).toEqual([APP_ERROR_NUMBERS.forbidden, APP_ERROR_NUMBERS.forbidden]);
    expect(p.sent[0]?.message.id).toBe(10);
    expect(ran).toBe(0);
    // One line for the peer at once; its second refusal is counted for the window's summary.
    expect(p.entries.filter((e) => e.level === "warn" && e.message.includes("token"))).toHaveLength(1);
    p.dispatcher.close();
    expect(p.entries.at(-1)).toMatchObject({ level: "warn", message: expect.stringContaining("refused 1 more messages"), fields: { peer: "p1", count: 1 } });
  });
});

describe("B K-6 a flood of refused messages costs a bounded number of log lines", () => {
  const wrong = (p: ReturnType<typeof pair>, peer: string, id: number) => p.raw(JSON.stringify({ jsonrpc: "2.0", id, method: "echo" }), "b".repeat(64), peer);
  const tokenLines = (p: ReturnType<typeof pair>) => p.entries.filter((e) => e.message.includes("wrong token"));
  /** Refusals each line stands for: 1 for a line logged as it happened, `count` for a summary. */
  const accounted = (p: ReturnType<typeof pair>) => tokenLines(p).reduce((sum, e) => sum + Number(e.fields?.count ?? 1), 0);

  it("one peer's thousands of wrong-token frames: every one answered, one line at once, one summary with the count when the window ends", () => {
    const p = pair(RouteTable.of({ echo: async () => "ok" }));
    for (let id = 0; id < 5_000; id += 1) wrong(p, "p1", id);
    expect(p.sent).toHaveLength(5_000);
    expect(p.sent.every((s) => s.message.error.code === APP_ERROR_NUMBERS.forbidden)).toBe(true);
    expect(tokenLines(p)).toHaveLength(1);
    p.dispatcher.close();
    expect(tokenLines(p)).toHaveLength(2);
    expect(tokenLines(p)[1]).toMatchObject({
      message: "rpc: refused 4999 more messages with a missing or wrong token in the last minute",
      fields: { peer: "p1", count: 4_999, window_ms: RPC_REFUSAL_WINDOW_MS },
    });
  });

  it(`logs the first refusal of each of RPC_MAX_REFUSAL_PEERS (${RPC_MAX_REFUSAL_PEERS}) peers; further peers share one count`, () => {
    const p = pair(RouteTable.of({ echo: async () => "ok" }));
    for (let n = 0; n < RPC_MAX_REFUSAL_PEERS; n += 1) wrong(p, `peer-${n}`, n);
    expect(tokenLines(p)).toHaveLength(RPC_MAX_REFUSAL_PEERS);
    for (let n = 0; n < 1_000; n += 1) wrong(p, `fresh-${n}`, n);
    expect(tokenLines(p)).toHaveLength(RPC_MAX_REFUSAL_PEERS);
    p.dispatcher.close();
    expect(tokenLines(p)).toHaveLength(RPC_MAX_REFUSAL_PEERS + 1);
    expect(tokenLines(p).at(-1)!.fields).toMatchObject({ peer: "(other peers)", count: 1_000 });
    expect(accounted(p)).toBe(RPC_MAX_REFUSAL_PEERS + 1_000);
  });

  it("a new window logs a peer's next refusal at once again, after the summary of the last one", () => {
    vi.useFakeTimers();
    try {
      const p = pair(RouteTable.of({ echo: async () => "ok" }));
      for (let id = 0; id < 3; id += 1) wrong(p, "p1", id);
      vi.advanceTimersByTime(RPC_REFUSAL_WINDOW_MS - 1);
      expect(tokenLines(p)).toHaveLength(1);
      vi.advanceTimersByTime(1);
      expect(tokenLines(p).map((e) => e.fields?.count)).toEqual([undefined, 2]);
      wrong(p, "p1", 3);
      expect(tokenLines(p).map((e) => e.fields?.count)).toEqual([undefined, 2, undefined]);
      expect(accounted(p)).toBe(4);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("B oversized RPC messages", () => {
  it("refuses a frame over RPC_MAX_MESSAGE_BYTES before parsing, naming the limit and size", async () => {
    const p = pair(RouteTable.of({ echo: async (params) => params }));
    const body = JSON.stringify({ jsonrpc: "2.0", id: 12, method: "echo", params: { s: "x".repeat(RPC_MAX_MESSAGE_BYTES) } });
    p.raw(body);
    await poll(() => p.sent.length === 1);
    const error = p.sent[0]!.message.error;
    expect(error.code).toBe(APP_ERROR_NUMBERS.limit_exceeded);
    expect(error.message).toContain("RPC_MAX_MESSAGE_BYTES");
    expect(error.message).toContain(String(Buffer.byteLength(body)));
  });

  it("accepts a frame exactly at the limit", async () => {
    const p = pair(RouteTable.of({ echo: async () => "ok" }));
    const shell = JSON.stringify({ jsonrpc: "2.0", id: 13, method: "echo", params: { s: "" } });
    const body = shell.replace('"s":""', `"s":"${"x".repeat(RPC_MAX_MESSAGE_BYTES - Buffer.byteLength(shell))}"`);
    expect(Buffer.byteLength(body)).toBe(RPC_MAX_MESSAGE_BYTES);
    p.raw(body);
    expect((await p.reply(13)).result).toBe("ok");
  });

  it("refuses a reply over the limit with limit_exceeded instead of sending it", async () => {
    const p = pair(RouteTable.of({ big: async () => "y".repeat(RPC_MAX_MESSAGE_BYTES) }));
    p.call(14, "big", {});
    const error = (await p.reply(14)).error;
    expect(error.code).toBe(APP_ERROR_NUMBERS.limit_exceeded);
    expect(error.message).toMatch(/^reply of \d+ bytes exceeds RPC_MAX_MESSAGE_BYTES/);
  });
});

/** Params whose value `v` holds `depth - 1` nested lists, so the params nest exactly `depth` levels. */
function paramsOfDepth(depth: number): string {
  return `{"v":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;
}

describe("B deeply nested RPC params", () => {
  it("passes params nested exactly RPC_MAX_PARAMS_DEPTH levels to the handler", async () => {
    const p = pair(RouteTable.of({ echo: async () => "ok" }));
    p.raw(`{"jsonrpc":"2.0","id":30,"method":"echo","params":${paramsOfDepth(RPC_MAX_PARAMS_DEPTH)}}`);
    expect((await p.reply(30)).result).toBe("ok");
  });

  it("refuses params one level deeper with limit_exceeded naming the bound, without calling the handler", async () => {
    let called = false;
    const p = pair(RouteTable.of({ echo: async () => (called = true) }));
    p.raw(`{"jsonrpc":"2.0","id":31,"method":"echo","params":${paramsOfDepth(RPC_MAX_PARAMS_DEPTH + 1)}}`);
    const error = (await p.reply(31)).error;
    expect(error.code).toBe(APP_ERROR_NUMBERS.limit_exceeded);
    expect(error.message).toContain(`RPC_MAX_PARAMS_DEPTH`);
    expect(error.data).toEqual({ limit: "RPC_MAX_PARAMS_DEPTH", max: RPC_MAX_PARAMS_DEPTH });
    expect(called).toBe(false);
  });
});

describe("K-4 an answer the handler has at once", () => {
  it("is sent before receive() returns, with no pending entry or deadline timer; a promise's answer stays pending until it settles", async () => {
    vi.useFakeTimers();
    try {
      const slow = gate("later");
      const p = pair(RouteTable.of({ now: (params) => ({ echoed: params }), slow: slow.handler }));
      p.call(40, "now", { x: 1 });
      // No await: the reply is already out, and nothing was left to time out or cancel.
      expect(p.sent.map((s) => s.message)).toEqual([{ jsonrpc: "2.0", id: 40, result: { echoed: { x: 1 } } }]);
      expect(p.dispatcher.pendingCount).toBe(0);
      expect(vi.getTimerCount()).toBe(0);
      p.call(41, "slow", {});
      expect(p.dispatcher.pendingCount).toBe(1);
      expect(vi.getTimerCount()).toBe(1);
      slow.release();
      await vi.waitFor(() => expect(p.sent).toHaveLength(2));
      expect(p.sent[1]!.message.result).toBe("later");
      expect(p.dispatcher.pendingCount).toBe(0);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("goes through the same checks: a synchronous throw, an unencodable result and an oversized one are error answers, sent at once", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const p = pair(RouteTable.of({
      refuse: () => {
        throw new AppError("not_found", "no such skill");
      },
      cyclic: () => cyclic,
      huge: () => "x".repeat(RPC_MAX_MESSAGE_BYTES),
    }));
    p.call(42, "refuse", {});
    p.call(43, "cyclic", {});
    p.call(44, "huge", {});
    expect(p.sent.map((s) => [s.message.id, s.message.error.code])).toEqual([
      [42, APP_ERROR_NUMBERS.not_found],
      [43, INTERNAL_ERROR],
      [44, APP_ERROR_NUMBERS.limit_exceeded],
    ]);
    expect(p.dispatcher.pendingCount).toBe(0);
  });
});

describe("K-4 timeouts", () => {
  it("aborts the handler and answers timeout after the default deadline; a late answer is not sent", async () => {
    const contexts: CallContext[] = [];
    let release!: () => void;
    // A handler that ignores its abort signal and answers once released.
    const late = new Promise<void>((resolve) => (release = resolve)).then(() => "late");
    const p = pair(RouteTable.of({ slow: (_params, context) => (contexts.push(context), late) }), 50);
    p.call(15, "slow", {});
    const error = (await p.reply(15)).error;
    expect(error.code).toBe(APP_ERROR_NUMBERS.timeout);
    expect(contexts[0]?.signal.aborted).toBe(true);
    release();
    // The dispatcher subscribed to `late` before this await did, so it has handled the late answer by now.
    await late;
    expect(p.sent).toHaveLength(1);
  });

  it("uses a route's own deadline over the default", async () => {
    const slow = gate("late");
    const p = pair(RouteTable.of({ slow: { handler: slow.handler, timeoutMs: 30 } }), 60_000);
    p.call(16, "slow", {});
    expect((await p.reply(16)).error.data).toEqual({ timeoutMs: 30 });
  });
});

describe("K-4 cancellation", () => {
  it("cancelCell fails that cell's calls at once, aborts their handlers and notifies the kernel", async () => {
    const slow = gate("late");
    const p = pair(RouteTable.of({ slow: slow.handler }));
    p.raw(JSON.stringify({ jsonrpc: "2.0", method: "albedo/hello" }), TOKEN, "kernel");
    p.call(17, "slow", {}, "cell-A");
    p.call(18, "slow", {}, "cell-B");
    await poll(() => slow.contexts.length === 2);
    expect(p.dispatcher.cancelCell("cell-A", "interrupted by the user")).toBe(1);
    expect((await p.reply(17)).error).toMatchObject({ code: APP_ERROR_NUMBERS.cancelled, message: expect.stringContaining("interrupted") });
    expect(slow.contexts[0]?.signal.aborted).toBe(true);
    expect(slow.contexts[1]?.signal.aborted).toBe(false);
    expect(p.sent.find((s) => s.message.method === RPC_CANCEL_METHOD)).toEqual({
      peer: "kernel",
      message: { jsonrpc: "2.0", method: RPC_CANCEL_METHOD, params: { cell: "cell-A" } },
    });
    expect(p.dispatcher.pendingCount).toBe(1);
  });

  it("a handler that looks at its signal only after the call was cancelled finds it aborted with the reason", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let seen: CallContext | undefined;
    const p = pair(RouteTable.of({ late: async (_params, context) => ((seen = context), await released, "late") }));
    p.call(23, "late", {}, "cell-C");
    await poll(() => seen !== undefined);
    p.dispatcher.cancelCell("cell-C");
    expect(seen!.signal.aborted).toBe(true);
    expect(seen!.signal.reason).toBeInstanceOf(AppError);
    expect((seen!.signal.reason as AppError).code).toBe("cancelled");
    release();
  });

  it("failAll fails every pending call with the given code", async () => {
    const slow = gate("late");
    const p = pair(RouteTable.of({ slow: slow.handler }));
    p.call(19, "slow", {});
    p.call(20, "slow", {});
    await poll(() => slow.contexts.length === 2);
    expect(p.dispatcher.failAll("kernel_died", "the kernel exited")).toBe(2);
    expect((await p.reply(19)).error.code).toBe(APP_ERROR_NUMBERS.kernel_died);
    expect((await p.reply(20)).error.message).toBe("the kernel exited");
  });
});

describe("K-7 route swap", () => {
  it("a call in flight finishes on its table while a later call sees the new one", async () => {
    const slowA = gate("answer from A");
    const tableA = RouteTable.of({ "skills.list": slowA.handler });
    const tableB = RouteTable.of({ "skills.list": async () => "answer from B" });
    const p = pair(tableA);
    p.call(21, "skills.list", {});
    await poll(() => slowA.contexts.length === 1);
    p.dispatcher.swapRoutes(tableB);
    expect(p.dispatcher.routes).toBe(tableB);
    p.call(22, "skills.list", {});
    expect((await p.reply(22)).result).toBe("answer from B");
    slowA.release();
    expect((await p.reply(21)).result).toBe("answer from A");
  });

  it("a method only the new table has is unknown before the swap and served after", async () => {
    const p = pair(RouteTable.empty());
    p.call(23, "ext.thing", {});
    expect((await p.reply(23)).error.code).toBe(METHOD_NOT_FOUND);
    p.dispatcher.swapRoutes(RouteTable.of({ "ext.thing": async () => 1 }));
    p.call(24, "ext.thing", {});
    expect((await p.reply(24)).result).toBe(1);
  });
});

describe("K-5 route table", () => {
  it("is immutable and validates timeouts", () => {
    const table = RouteTable.of({ b: async () => 1, a: { handler: async () => 2, timeoutMs: 5 } });
    expect(table.methods()).toEqual(["a", "b"]);
    expect(Object.isFrozen(table)).toBe(true);
    expect(() => RouteTable.of({ x: { handler: async () => 1, timeoutMs: 0 } })).toThrow(/timeoutMs/);
  });

  it("knows its longest deadline, counting a route without one as the default", () => {
    const table = RouteTable.of({ a: async () => 1, b: { handler: async () => 2, timeoutMs: 90_000 }, c: { handler: async () => 3, timeoutMs: 5 } });
    expect(table.longestTimeoutMs(30_000)).toBe(90_000);
    expect(RouteTable.of({ a: { handler: async () => 1, timeoutMs: 5 } }).longestTimeoutMs(30_000)).toBe(30_000);
    expect(RouteTable.empty().longestTimeoutMs(30_000)).toBe(30_000);
  });
});

describe("K-4 K-5 declared methods: the dispatcher checks params against the declaration", () => {
  const echo = {
    name: "test.echo",
    summary: "Echoes its params.",
    params: z.object({ name: z.string().min(1), offset: z.number().int().min(0).default(0), note: z.string().optional() }).strict(),
    result: answers<Record<string, unknown>>(),
  };

  it("hands the handler what the schema parsed (defaults filled in), and refuses bad or unknown params with invalid_params naming each member", async () => {
    const seen: unknown[] = [];
    const { call, reply } = pair(RouteTable.declared([route(echo, (params) => (seen.push(params), params))]));
    call(1, "test.echo", { name: "a" });
    expect((await reply(1)).result).toEqual({ name: "a", offset: 0 });
    call(2, "test.echo", { name: "", offset: -1, extra: true });
    const refused = (await reply(2)).error;
    expect(refused.code).toBe(APP_ERROR_NUMBERS.invalid_params);
    expect(refused.message).toMatch(/^test\.echo: "name": .*; "offset": .*; "extra": Unrecognized key/);
    expect(refused.data.problems.map((p: { path: string }) => p.path)).toEqual(["name", "offset", "extra"]);
    call(3, "test.echo", ["positional"]);
    expect((await reply(3)).error.code).toBe(INVALID_PARAMS);
    expect(seen).toEqual([{ name: "a", offset: 0 }]);
  });

  it("takes the deadline from the declaration, and refuses a method declared twice", async () => {
    const slow = { ...echo, name: "test.slow", timeoutMs: 20 };
    const { call, reply } = pair(RouteTable.declared([route(slow, () => new Promise(() => undefined))]), 10_000);
    call(1, "test.slow", { name: "a" });
    expect((await reply(1)).error).toMatchObject({ code: APP_ERROR_NUMBERS.timeout, data: { timeoutMs: 20 } });
    expect(() => RouteTable.declared([route(echo, () => ({})), route(echo, () => ({}))])).toThrow(/test\.echo is declared twice/);
  });

  it("lists each method's parameters as the kernel package declares them", () => {
    expect(parametersOf(echo)).toEqual([
      { name: "name", required: true },
      { name: "offset", required: false, default: 0 },
      { name: "note", required: false, default: null },
    ]);
  });
});
