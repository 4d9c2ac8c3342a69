/**
 * The 2026-07-28 era over Streamable HTTP (M-6): a server written with the official Python SDK,
 * serving both eras on loopback. The client discovers the new era there too, and a call the
 * server runs as a task is followed through tasks/get to its result, its status heard, and
 * cancelled by an interrupt with tasks/cancel, as over stdio.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, connect } from "node:net";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpHub } from "../../src/mcp/index.js";
import { poll } from "../support/poll.js";
import { tempDirs } from "../support/tempDirs.js";
import { HAVE_TEST_VENV, TEST_VENV_PYTHON } from "../support/testVenv.js";
import { hubs, NEVER, resolved } from "./support.js";

const temps = tempDirs("alb-mcp-eras-http-");
const made = hubs();
const ERA_SERVER = resolve("test/mcp/servers/era_server.py");
/** A cold Python SDK import (and uvicorn) can take many seconds on a busy machine. */
const STARTUP_MS = 120_000;
let server: ChildProcess | undefined;
let hub: McpHub;
let record: string;

const recorded = () => {
  try {
    return readFileSync(record, "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
};

/** A loopback port nothing listens on right now. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, "127.0.0.1", done));
  const { port } = probe.address() as AddressInfo;
  await new Promise((done) => probe.close(done));
  return port;
}

const accepts = (port: number) =>
  new Promise<boolean>((done) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), done(true)));
    socket.once("error", () => done(false));
  });

describe.skipIf(!HAVE_TEST_VENV)("M-6 the 2026-07-28 era over Streamable HTTP", () => {
  beforeAll(async () => {
    record = join(temps.make(), "record.txt");
    const port = await freePort();
    server = spawn(TEST_VENV_PYTHON, [ERA_SERVER, "http", String(port)], { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, RECORD: record } });
    let stderr = "";
    server.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    await poll(() => accepts(port), { timeoutMs: STARTUP_MS, what: `the Python SDK server on port ${port}` }).catch((error: Error) => {
      throw new Error(`${error.message}; its stderr ends: ${stderr}`);
    });
    hub = made.make();
    await hub.start(await resolved(temps, { web: { url: `http://127.0.0.1:${port}/mcp` } }));
  }, STARTUP_MS * 2);

  afterAll(async () => {
    await made.closeAll();
    if (server && server.exitCode === null) {
      const exited = new Promise((done) => server!.once("exit", done));
      server.kill("SIGTERM");
      await exited;
    }
    temps.cleanup();
  });

  it("discovers the new era over HTTP and calls a tool in it", async () => {
    expect(hub.servers()[0]).toMatchObject({ name: "web", status: "running", era: "modern", protocol: "2026-07-28" });
    expect((await hub.call("web.shout", { text: "hi" }, { signal: NEVER })).value).toEqual({ result: "HI" });
    expect(recorded()).toContain("shout 2026-07-28");
  });

  it("follows a task to its result through tasks/get and hears its status", async () => {
    const statuses: string[] = [];
    const result = await hub.call("web.slow", { seconds: 1 }, { signal: NEVER, onStatus: (text) => statuses.push(text) });
    expect(result).toMatchObject({ value: "rested 1.0s as a task", is_error: false });
    expect(statuses).toEqual(["napping", "rested"]);
    expect(recorded().filter((line) => line.startsWith("tasks/get ")).length).toBeGreaterThan(0);
  });

  it("an interrupt cancels the task on the server with tasks/cancel", async () => {
    const interrupt = new AbortController();
    const tasksBefore = recorded().filter((line) => line.startsWith("task ")).length;
    const call = hub.call("web.slow", { seconds: 60 }, { signal: interrupt.signal });
    await poll(() => recorded().filter((line) => line.startsWith("task ")).length > tasksBefore, { what: "the task to start" });
    interrupt.abort();
    await expect(call).rejects.toMatchObject({ code: "cancelled" });
    const task = recorded().filter((line) => line.startsWith("task ")).at(-1)!.slice("task ".length);
    await poll(() => recorded().includes(`tasks/cancel ${task}`), { what: "tasks/cancel to reach the server" });
  });
});
