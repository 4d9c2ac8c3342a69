/**
 * Both protocol eras (M-6) against servers written with the official Python SDK: one that speaks
 * only 2026-07-28, one that speaks only the legacy handshake, one that speaks both; and the Node
 * reference server (the TypeScript SDK's v1, legacy). The client discovers each server's era,
 * falls back to the handshake, reports the era, follows tool-list changes in both, turns resource
 * links into link objects it can read, and follows tasks (waited for, cancelled, bounded).
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpHub, McpServerEntry } from "../../src/mcp/index.js";
import { poll } from "../support/poll.js";
import { tempDirs } from "../support/tempDirs.js";
import { HAVE_TEST_VENV, TEST_VENV_PYTHON } from "../support/testVenv.js";
import { EVERYTHING, hubs, NEVER, resolved } from "./support.js";

const temps = tempDirs("alb-mcp-eras-");
const made = hubs();
const ERA_SERVER = resolve("test/mcp/servers/era_server.py");
// A cold Python SDK import can take many seconds on a busy machine.
const STARTUP_MS = 120_000;
let hub: McpHub;
let records: string;

function era(mode: string, extra: Partial<McpServerEntry> = {}): McpServerEntry {
  return { command: TEST_VENV_PYTHON, args: [ERA_SERVER, mode], env: { RECORD: join(records, mode) }, startup_timeout_ms: STARTUP_MS, ...extra } as McpServerEntry;
}

function recorded(mode: string): string[] {
  try {
    return readFileSync(join(records, mode), "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

function status(name: string) {
  return hub.servers().find((item) => item.name === name)!;
}

describe.skipIf(!HAVE_TEST_VENV)("M-6 both protocol eras", () => {
  beforeAll(async () => {
    records = temps.make();
    hub = made.make();
    await hub.start(await resolved(temps, {
      modern: era("modern"),
      legacy: era("legacy"),
      both: era("both"),
      briefly: era("modern", { call_timeout_ms: 1_500, env: { RECORD: join(records, "briefly") } }),
      everything: { command: EVERYTHING },
    }));
  }, STARTUP_MS * 2);
  afterAll(async () => {
    await made.closeAll();
    temps.cleanup();
  });

  it("discovers a server that speaks only 2026-07-28 and reports its era; its calls carry the per-request envelope", async () => {
    expect(status("modern")).toMatchObject({ status: "running", era: "modern", protocol: "2026-07-28" });
    expect((await hub.call("modern.shout", { text: "hi" }, { signal: NEVER })).value).toEqual({ result: "HI" });
    expect(recorded("modern")).toContain("shout 2026-07-28");
  });

  it("falls back to the handshake for a server that does not know server/discover, and for the TypeScript SDK's v1 server", async () => {
    expect(status("legacy")).toMatchObject({ status: "running", era: "legacy", protocol: "2025-11-25" });
    expect((await hub.call("legacy.shout", { text: "hi" }, { signal: NEVER })).value).toEqual({ result: "HI" });
    expect(recorded("legacy")).toContain("shout 2025-11-25");
    expect(status("everything")).toMatchObject({ status: "running", era: "legacy" });
    expect((await hub.call("everything.echo", { message: "x" }, { signal: NEVER })).value).toBe("Echo: x");
  });

  it("speaks 2026-07-28 to a server that offers both eras", async () => {
    expect(status("both")).toMatchObject({ status: "running", era: "modern", protocol: "2026-07-28" });
    expect((await hub.call("both.shout", { text: "hi" }, { signal: NEVER })).value).toEqual({ result: "HI" });
  });

  it("hears a tool-list change in each era (subscriptions/listen, notifications/tools/list_changed)", async () => {
    for (const name of ["modern", "legacy"]) {
      const heard: string[] = [];
      const listening = hub.onToolsChanged((event) => heard.push(event.server));
      expect(hub.tools(name).map((tool) => tool.tool)).not.toContain("grown");
      await hub.call(`${name}.grow`, {}, { signal: NEVER });
      await poll(() => hub.tools(name).some((tool) => tool.tool === "grown"), { what: `${name}'s list to gain its tool` });
      expect(heard).toContain(name);
      listening.dispose();
    }
  });

  it("turns a resource_link into a link object, and reads it from the server that gave it", async () => {
    for (const name of ["modern", "legacy"]) {
      const result = await hub.call(`${name}.link`, {}, { signal: NEVER });
      expect(result.links).toEqual([{ server: name, uri: "notes://today", name: "today", mime: "text/plain", description: "Today's notes" }]);
      const read = await hub.read("notes://today", name, NEVER);
      expect(read.contents).toEqual([{ uri: "notes://today", mime: "text/plain", text: "buy milk" }]);
    }
    // The last link came from legacy: without a server named, the link says where to read.
    expect((await hub.read("notes://today", undefined, NEVER)).contents[0]!.text).toBe("buy milk");
    await expect(hub.read("notes://elsewhere", undefined, NEVER)).rejects.toMatchObject({ code: "not_found", message: expect.stringContaining('server="NAME"') });
  });

  it("waits for a call the server answers with a task, through tasks/get, and hears its status", async () => {
    const statuses: string[] = [];
    const result = await hub.call("modern.slow", { seconds: 1 }, { signal: NEVER, onStatus: (text) => statuses.push(text) });
    expect(result).toMatchObject({ value: "rested 1.0s as a task", is_error: false });
    expect(statuses).toEqual(["napping", "rested"]);
    const lines = recorded("modern");
    expect(lines.some((line) => line.startsWith("task "))).toBe(true);
    expect(lines.some((line) => line.startsWith("tasks/get "))).toBe(true);
  });

  it("a legacy server's call of the same tool is a plain call: no task", async () => {
    expect((await hub.call("legacy.slow", { seconds: 0.1 }, { signal: NEVER })).value).toEqual({ result: "rested 0.1s" });
    expect(recorded("legacy").some((line) => line.startsWith("task "))).toBe(false);
  });

  it("an interrupt cancels the task: the server gets tasks/cancel", async () => {
    const interrupt = new AbortController();
    const call = hub.call("modern.slow", { seconds: 60 }, { signal: interrupt.signal });
    await poll(() => recorded("modern").filter((line) => line.startsWith("task ")).length >= 2, { what: "the second task to start" });
    interrupt.abort();
    await expect(call).rejects.toMatchObject({ code: "cancelled" });
    const task = recorded("modern").filter((line) => line.startsWith("task ")).at(-1)!.slice("task ".length);
    await poll(() => recorded("modern").includes(`tasks/cancel ${task}`), { what: "tasks/cancel to reach the server" });
  });

  it("a task is bounded by call_timeout_ms: past it the call is timeout and the task cancelled", async () => {
    await expect(hub.call("briefly.slow", { seconds: 60 }, { signal: NEVER })).rejects.toMatchObject({ code: "timeout", message: expect.stringContaining("1500 ms (call_timeout_ms)") });
    const task = recorded("briefly").find((line) => line.startsWith("task "))!.slice("task ".length);
    await poll(() => recorded("briefly").includes(`tasks/cancel ${task}`), { what: "tasks/cancel after the deadline" });
  });
});
