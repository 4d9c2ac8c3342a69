/**
 * Servers that misbehave (M-2, M-5, B), played by test/mcp/servers/raw_server.py over stdio:
 * each bad input is bounded, a diagnostic or a typed error, and never stops the others.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { isAppError } from "../../src/errors/index.js";
import {
  MAX_MCP_RESTARTS, MAX_MCP_TOOLS_PER_SERVER, MCP_MAX_MESSAGE_BYTES, MCP_MAX_RESULT_BYTES, MCP_STDERR_MAX_LINES,
} from "../../src/mcp/limits.js";
import { poll } from "../support/poll.js";
import { tempDirs } from "../support/tempDirs.js";
import { hubs, logSink, NEVER, raw, resolved } from "./support.js";

const temps = tempDirs("alb-mcp-bad-");
const made = hubs();
afterEach(() => made.closeAll());
afterAll(() => temps.cleanup());

const status = (hub: ReturnType<typeof made.make>, name: string) => hub.servers().find((item) => item.name === name)!;

describe("M-2 a server that never answers initialize", () => {
  it("is failed at its startup deadline while the others run", async () => {
    const hub = made.make();
    await hub.start(await resolved(temps, { silent: raw("silent", { startup_timeout_ms: 300 }), fine: raw("normal") }));
    expect(status(hub, "silent")).toMatchObject({ status: "failed", tools: 0 });
    expect(status(hub, "silent").diagnostics.join("\n")).toContain("did not answer initialize (or server/discover) and tools/list within 300 ms (startup_timeout_ms)");
    expect(status(hub, "fine").status).toBe("running");
    expect((await hub.call("fine.ok", { text: "a" }, { signal: NEVER })).value).toBe("ok a");
    await expect(hub.call("silent.ok", {}, { signal: NEVER })).rejects.toMatchObject({ code: "conflict", message: expect.stringContaining("is failed, not running") });
  });
});

describe("M-2 a server that exits at once", () => {
  it("is restarted at most MAX_MCP_RESTARTS times, then failed with its last stderr lines", async () => {
    const { log, lines } = logSink();
    const hub = made.make({ log });
    await hub.start(await resolved(temps, { dies: raw("exit") }));
    const dies = status(hub, "dies");
    expect(dies.status).toBe("failed");
    expect(dies.diagnostics[0]).toContain(`restarted ${MAX_MCP_RESTARTS} times, MAX_MCP_RESTARTS = ${MAX_MCP_RESTARTS}`);
    expect(dies.diagnostics).toContain("stderr: raw server: cannot start, missing configuration");
    // One start and MAX_MCP_RESTARTS restarts, each writing its one stderr line.
    expect(lines.filter((line) => line.includes("cannot start, missing configuration"))).toHaveLength(MAX_MCP_RESTARTS + 1);
  });

  it("one that exits while it lists its tools is restarted at most MAX_MCP_RESTARTS times too, counted once per start", async () => {
    const { log, lines } = logSink();
    const hub = made.make({ log });
    await hub.start(await resolved(temps, { dies: raw("exit_on_list") }));
    await poll(() => status(hub, "dies").status === "failed", { what: "dies to fail" });
    // Time for a second restart loop, if one had started, to show itself.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(status(hub, "dies").status).toBe("failed");
    expect(status(hub, "dies").diagnostics[0]).toContain(`restarted ${MAX_MCP_RESTARTS} times, MAX_MCP_RESTARTS = ${MAX_MCP_RESTARTS}`);
    expect(lines.filter((line) => line.includes("gone while listing"))).toHaveLength(MAX_MCP_RESTARTS + 1);
  });

  it("a command that does not exist fails at once, without restarts", async () => {
    const hub = made.make();
    await hub.start(await resolved(temps, { gone: { command: "/nonexistent/mcp-server" } }));
    expect(status(hub, "gone").status).toBe("failed");
    expect(status(hub, "gone").diagnostics[0]).toMatch(/^gone did not start: .*ENOENT/);
  });
});

describe("B what a server writes besides its messages", () => {
  it("lines on stdout that are not JSON-RPC are logged as data and the server keeps working", async () => {
    const { log, lines } = logSink();
    const hub = made.make({ log });
    await hub.start(await resolved(temps, { noisy: raw("garbage") }));
    expect((await hub.call("noisy.ok", { text: "b" }, { signal: NEVER })).value).toBe("ok b");
    expect(lines.some((line) => line.includes("mcp noisy stdout: not a JSON-RPC message"))).toBe(true);
  });

  it("a stderr flood is logged bounded (MCP_STDERR_MAX_LINES, the rest counted in one line)", async () => {
    const { log, lines } = logSink();
    const hub = made.make({ log });
    await hub.start(await resolved(temps, { flood: raw("flood") }));
    expect(status(hub, "flood").status).toBe("running");
    await hub.close();
    const logged = lines.filter((line) => line.includes("mcp flood stderr: flood line"));
    expect(logged).toHaveLength(MCP_STDERR_MAX_LINES);
    expect(lines.some((line) => /mcp flood stderr: \d+ more lines not logged/.test(line))).toBe(true);
  });
});

describe("M-5 results past the bounds", () => {
  it(`a result over MCP_MAX_RESULT_BYTES (${MCP_MAX_RESULT_BYTES}) is limit_exceeded naming it; the connection survives`, async () => {
    const hub = made.make();
    await hub.start(await resolved(temps, { big: raw("normal") }));
    const pid = status(hub, "big").pid;
    await expect(hub.call("big.big", { bytes: MCP_MAX_RESULT_BYTES + 1 }, { signal: NEVER })).rejects.toMatchObject({ code: "limit_exceeded", message: expect.stringContaining("MCP_MAX_RESULT_BYTES") });
    expect(status(hub, "big")).toMatchObject({ status: "running", pid });
    expect((await hub.call("big.ok", { text: "c" }, { signal: NEVER })).value).toBe("ok c");
  });

  it("a 50 MB answer (over MCP_MAX_MESSAGE_BYTES) is limit_exceeded; the connection is dropped and the server restarted", async () => {
    const hub = made.make();
    await hub.start(await resolved(temps, { huge: raw("normal") }));
    const pid = status(hub, "huge").pid;
    await expect(hub.call("huge.big", { bytes: 50 * 1024 * 1024 }, { signal: NEVER })).rejects.toMatchObject({ code: "limit_exceeded", message: expect.stringContaining(`over ${MCP_MAX_MESSAGE_BYTES} bytes (MCP_MAX_MESSAGE_BYTES)`) });
    await poll(() => status(hub, "huge").status === "running", { what: "huge restarted" });
    expect(status(hub, "huge").pid).not.toBe(pid);
    expect((await hub.call("huge.ok", { text: "d" }, { signal: NEVER })).value).toBe("ok d");
  });
});

describe("B M-2 a server's stdout is read a line at a time, each line within MCP_MAX_MESSAGE_BYTES", () => {
  it("a line of 50 MB with no newline fails that server naming the bound, the event loop keeps turning meanwhile, and the server is restarted", async () => {
    const hub = made.make();
    await hub.start(await resolved(temps, { endless: raw("normal") }));
    const pid = status(hub, "endless").pid;
    // A timer that would stop firing while a read held the event loop (a buffer joined and scanned again on every chunk).
    let ticks = 0;
    let ticksAtBreak = -1;
    const ticker = setInterval(() => (ticks += 1), 1);
    try {
      const call = hub.call("endless.endless", { bytes: 50 * 1024 * 1024 }, { signal: NEVER });
      await expect(call).rejects.toMatchObject({ code: "limit_exceeded", message: expect.stringContaining(`over ${MCP_MAX_MESSAGE_BYTES} bytes (MCP_MAX_MESSAGE_BYTES)`) });
      ticksAtBreak = ticks;
    } finally {
      clearInterval(ticker);
    }
    expect(ticksAtBreak).toBeGreaterThan(0);
    await poll(() => status(hub, "endless").status === "running", { what: "endless restarted" });
    expect(status(hub, "endless").pid).not.toBe(pid);
    expect((await hub.call("endless.ok", { text: "e" }, { signal: NEVER })).value).toBe("ok e");
  });

  it("a message just under MCP_MAX_MESSAGE_BYTES with the next one right behind it in the same write is read, and so is the next", async () => {
    const { log, lines } = logSink();
    const hub = made.make({ log });
    await hub.start(await resolved(temps, { near: raw("normal") }));
    const pid = status(hub, "near").pid;
    expect((await hub.call("near.near", { bytes: MCP_MAX_MESSAGE_BYTES - 16 }, { signal: NEVER })).value).toBe("after the near one");
    expect(status(hub, "near")).toMatchObject({ status: "running", pid });
    expect(lines.some((line) => line.includes("MCP_MAX_MESSAGE_BYTES"))).toBe(false);
  });
});

describe("M-2 tool lists that are too long or odd", () => {
  it(`a list of 10,000 tools is cut at MAX_MCP_TOOLS_PER_SERVER (${MAX_MCP_TOOLS_PER_SERVER}) with a diagnostic`, async () => {
    const hub = made.make();
    await hub.start(await resolved(temps, { many: raw("many") }));
    expect(status(hub, "many").tools).toBe(MAX_MCP_TOOLS_PER_SERVER);
    expect(hub.tools("many")).toHaveLength(MAX_MCP_TOOLS_PER_SERVER);
    expect(status(hub, "many").diagnostics).toContain(`the server lists more than ${MAX_MCP_TOOLS_PER_SERVER} tools (MAX_MCP_TOOLS_PER_SERVER); the rest are left out`);
  });

  it("refuses names with full-width letters, a ligature or an invisible character, each with a diagnostic, so none is listed to the model", async () => {
    const hub = made.make();
    await hub.start(await resolved(temps, { odd: raw("odd_names") }));
    expect(hub.tools("odd").map((tool) => tool.tool)).toEqual(["ok"]);
    expect(status(hub, "odd").diagnostics).toEqual([
      'tool "\uff53\uff45\uff41\uff52\uff43\uff48" is not in Unicode NFKC form (it would read as "search"); left out',
      'tool "read\\u200bfile" contains an invisible character (a zero-width or format character, or a space); left out',
      'tool "\ufb01nd" is not in Unicode NFKC form (it would read as "find"); left out',
      'tool "ok\\u200d" contains an invisible character (a zero-width or format character, or a space); left out',
      'tool "\\u200b" contains an invisible character (a zero-width or format character, or a space); left out',
    ]);
  });

  it("keeps names that are not identifiers; a name with a dot or over 128 characters is a diagnostic", async () => {
    const hub = made.make();
    await hub.start(await resolved(temps, { odd: raw("normal") }));
    const names = hub.tools("odd").map((tool) => tool.tool);
    expect(names).toContain("my-tool");
    expect(names).not.toContain("has.dot");
    expect(names.some((name) => name.startsWith("xxx"))).toBe(false);
    const diagnostics = status(hub, "odd").diagnostics.join("\n");
    expect(diagnostics).toContain('tool "has.dot" contains "."');
    expect(diagnostics).toContain("is 200 characters; at most 128 (MAX_MCP_TOOL_NAME_LENGTH)");
    expect((await hub.call("odd.my-tool", {}, { signal: NEVER })).value).toBe("ok ");
  });

  it("a tool whose input schema is not JSON Schema is listed with a diagnostic and its calls refused", async () => {
    const hub = made.make();
    await hub.start(await resolved(temps, { schema: raw("normal") }));
    expect(hub.tools("schema").map((tool) => tool.tool)).toContain("bad_schema");
    expect(status(hub, "schema").diagnostics.join("\n")).toContain("tool bad_schema: its input schema is not valid JSON Schema");
    expect(hub.describe("schema.bad_schema").problem).toContain("not valid JSON Schema");
    await expect(hub.call("schema.bad_schema", { q: 1 }, { signal: NEVER })).rejects.toMatchObject({ code: "conflict", message: expect.stringContaining("schema.bad_schema cannot be called: its input schema is not valid JSON Schema") });
  });

  it("tools/list_changed refreshes the list and tells the listeners", async () => {
    const hub = made.make();
    await hub.start(await resolved(temps, { live: raw("normal") }));
    const events: string[] = [];
    hub.onToolsChanged((event) => events.push(event.server));
    expect(hub.tools("live").map((tool) => tool.tool)).not.toContain("added");
    await hub.call("live.change", {}, { signal: NEVER });
    await poll(() => events.length > 0, { what: "a tools changed event" });
    expect(events).toEqual(["live"]);
    expect(hub.tools("live").map((tool) => tool.tool)).toContain("added");
  });
});

describe("M-5 calls that fail, hang or are cancelled", () => {
  it("an isError result is returned with is_error and the server's text", async () => {
    const hub = made.make();
    await hub.start(await resolved(temps, { err: raw("normal") }));
    expect(await hub.call("err.fail", {}, { signal: NEVER })).toMatchObject({ is_error: true, error_text: "it went wrong", value: "it went wrong" });
  });

  it("a call past call_timeout_ms is timeout", async () => {
    const hub = made.make();
    await hub.start(await resolved(temps, { slow: raw("normal", { call_timeout_ms: 300 }) }));
    await expect(hub.call("slow.hang", {}, { signal: NEVER })).rejects.toMatchObject({ code: "timeout", message: "slow.hang did not answer within 300 ms (call_timeout_ms)" });
  });

  it("an aborted signal is cancelled and reaches the server as notifications/cancelled", async () => {
    const record = join(temps.make(), "record.txt");
    const hub = made.make();
    await hub.start(await resolved(temps, { hang: raw("normal", { env: { RECORD: record } }) }));
    const controller = new AbortController();
    const call = hub.call("hang.hang", {}, { signal: controller.signal });
    await poll(() => readRecord(record).some((line) => line.startsWith("call ")), { what: "the call to reach the server" });
    controller.abort();
    const error: unknown = await call.catch((caught: unknown) => caught);
    expect(isAppError(error, "cancelled")).toBe(true);
    const id = readRecord(record).find((line) => line.startsWith("call "))!.slice(5);
    await poll(() => readRecord(record).includes(`cancelled ${id}`), { what: "notifications/cancelled recorded by the server" });
    await expect(hub.call("hang.hang", {}, { signal: controller.signal })).rejects.toMatchObject({ code: "cancelled" });
  });
});

function readRecord(file: string): string[] {
  try {
    return readFileSync(file, "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}
