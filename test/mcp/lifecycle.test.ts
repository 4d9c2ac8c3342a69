/**
 * A session's servers over their life (M-1, M-2): the tools filter, secrets kept out of every
 * text, reload restarting only a changed entry, shared servers, and close() leaving no process.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { SharedServers, type McpServerEntry } from "../../src/mcp/index.js";
import { MAX_MCP_STARTUP_TIMEOUT_MS } from "../../src/mcp/limits.js";
import { groupGone } from "../../src/mcp/stdioTransport.js";
import { poll } from "../support/poll.js";
import { tempDirs } from "../support/tempDirs.js";
import { hubs, logSink, NEVER, raw, resolved } from "./support.js";

const temps = tempDirs("alb-mcp-life-");
const made = hubs();
afterEach(() => made.closeAll());
afterAll(() => temps.cleanup());

const pidOf = (hub: ReturnType<typeof made.make>, name: string) => hub.servers().find((item) => item.name === name)!.pid!;

describe("M-1 the tools filter of an entry", () => {
  it("lists only allowed tools; a denied one is forbidden (deny wins over allow)", async () => {
    const hub = made.make();
    await hub.start(await resolved(temps, { f: raw("normal", { tools: { allow: ["o?", "f*", "hang"], deny: ["fail", "h*"] } }) }));
    expect(hub.tools("f").map((tool) => tool.tool)).toEqual(["ok"]);
    await expect(hub.call("f.fail", {}, { signal: NEVER })).rejects.toMatchObject({ code: "forbidden", message: "f.fail is denied by the tools filter of f" });
    await expect(hub.call("f.hang", {}, { signal: NEVER })).rejects.toMatchObject({ code: "forbidden" });
    await expect(hub.call("f.pid", {}, { signal: NEVER })).rejects.toMatchObject({ code: "forbidden" });
    expect(() => hub.describe("f.fail")).toThrow(expect.objectContaining({ code: "forbidden" }));
  });
});

describe("M-1 a secret from from_env", () => {
  it("reaches the server but never a result, a diagnostic, an error or a log line", async () => {
    const secret = "s3cr3t-value-0123456789";
    const { log, lines } = logSink();
    const hub = made.make({ log });
    const env = { ...process.env, ALB_TEST_MCP_SECRET: secret };
    const entry = raw("normal", { env: { SECRET: { from_env: "ALB_TEST_MCP_SECRET" } } });
    await hub.start(await resolved(temps, { sec: entry, dies: raw("exit", { env: { SECRET: { from_env: "ALB_TEST_MCP_SECRET" } } }) }, env));
    const result = await hub.call("sec.secret", {}, { signal: NEVER });
    expect(result.value).toBe("the secret is [redacted]");
    const error = await hub.call("sec.bad_schema", {}, { signal: NEVER }).catch((caught: Error) => caught.message);
    await hub.close();
    expect(lines.some((line) => line.includes("my secret is [redacted]"))).toBe(true);
    const everything = [JSON.stringify(result), String(error), JSON.stringify(hub.servers()), ...lines].join("\n");
    expect(everything).not.toContain(secret);
  });

  it("an unset variable is a diagnostic naming the variable", async () => {
    const hub = made.make();
    await hub.start(await resolved(temps, { unset: raw("normal", { env: { SECRET: { from_env: "ALB_TEST_MCP_UNSET" } } }) }, {}));
    expect(hub.servers()).toEqual([expect.objectContaining({ name: "unset", status: "failed", diagnostics: [expect.stringContaining("environment variable ALB_TEST_MCP_UNSET (for env.SECRET) is not set")] })]);
  });
});

describe("M-2 reload restarts only a changed entry", () => {
  it("keeps the unchanged server's process, restarts the changed one, stops the removed one", async () => {
    const hub = made.make();
    const a = raw("normal");
    const workspace = temps.make();
    await hub.start(await resolved(temps, { a, b: raw("normal"), c: raw("normal") }, process.env, workspace));
    const before = { a: pidOf(hub, "a"), b: pidOf(hub, "b"), c: pidOf(hub, "c") };
    await hub.reload(await resolved(temps, { a, b: raw("normal", { env: { X: "1" } }), d: raw("normal") }, process.env, workspace));
    expect(pidOf(hub, "a")).toBe(before.a);
    expect(pidOf(hub, "b")).not.toBe(before.b);
    expect(groupGone(before.b)).toBe(true);
    expect(groupGone(before.c)).toBe(true);
    expect(hub.servers().map((item) => [item.name, item.status])).toEqual([["a", "running"], ["b", "running"], ["d", "running"]]);
  });
});

describe("M-2 shared servers", () => {
  it("two hubs with the same shared entry use one process, which stops with the last hub", async () => {
    const pool = new SharedServers({ log: () => undefined, clientInfo: { name: "albedo-test", version: "1" } });
    const entry: McpServerEntry = raw("normal", { shared: true });
    const one = made.make({ sharedPool: pool });
    const two = made.make({ sharedPool: pool });
    const own = made.make({ sharedPool: pool });
    const workspace = temps.make();
    await one.start(await resolved(temps, { s: entry }, process.env, workspace));
    await two.start(await resolved(temps, { s: entry }, process.env, workspace));
    await own.start(await resolved(temps, { s: raw("normal") }, process.env, workspace));
    const pid = pidOf(one, "s");
    expect(pidOf(two, "s")).toBe(pid);
    expect(pidOf(own, "s")).not.toBe(pid);
    await one.close();
    expect(groupGone(pid)).toBe(false);
    expect((await two.call("s.ok", { text: "e" }, { signal: NEVER })).value).toBe("ok e");
    await two.close();
    expect(groupGone(pid)).toBe(true);
  });
});

describe("M-2 close() leaves no process", () => {
  it("the process group of every stdio server is gone once close() resolved", async () => {
    const hub = made.make();
    await hub.start(await resolved(temps, { x: raw("normal"), y: raw("garbage"), z: raw("silent", { startup_timeout_ms: 200 }) }));
    const pids = [pidOf(hub, "x"), pidOf(hub, "y")];
    await hub.close();
    for (const pid of pids) expect(groupGone(pid)).toBe(true);
    expect(hub.servers()).toEqual([]);
  });

  // Without the abort, close() would wait out the startup deadline (10 minutes here) and the test time out.
  it("a server still starting is ended too: close() aborts its start and waits for its process group", async () => {
    const record = join(temps.make(), "record.txt");
    const hub = made.make();
    const started = hub.start(await resolved(temps, { slow: raw("silent", { env: { RECORD: record }, startup_timeout_ms: MAX_MCP_STARTUP_TIMEOUT_MS }) }));
    await poll(() => existsSync(record) && readFileSync(record, "utf8").startsWith("pid "), { what: "the silent server's pid" });
    const pid = Number(readFileSync(record, "utf8").split("\n")[0]!.slice(4));
    expect(hub.servers()[0]!.status).toBe("starting");
    await hub.close();
    await started;
    expect(groupGone(pid)).toBe(true);
  });
});
