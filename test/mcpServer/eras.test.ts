/**
 * albedo as an MCP server in both protocol eras (P-5), against real peers: the TypeScript SDK's v2
 * client pinned to 2026-07-28, its v1 client (legacy), and the Python SDK 2.3 client with the Tasks
 * extension; over stdio (`albedo mcp serve` as a child process) and over `/mcp` on a real daemon.
 * A handle keeps a kernel's state between calls, an unknown handle is an isError result, a long
 * cell becomes a task that tasks/get answers and tasks/cancel interrupts, idle handles close, and
 * tools/list is the same in both eras and across fresh servers; Skills over MCP (skills/list,
 * skills/get, verified reads, directory reads) is served in both eras, its digests following a reload.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttp } from "@modelcontextprotocol/client";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";
import { StdioClientTransport as ModernStdio } from "@modelcontextprotocol/client/stdio";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyHttp } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCP_PATH } from "../../src/daemon/index.js";
import { PYTHON_PROGRESS_INTERVAL_MS, PYTHON_TASK_AFTER_MS, SERVER_NAME } from "../../src/mcpServer/index.js";
import { call, type DaemonProcess, type Dirs } from "../daemon/support/daemon.js";
import { sessionDirs, type SessionDirs } from "../session/fixtures.js";
import { runProgram } from "../support/cli.js";
import { poll } from "../support/poll.js";
import { roots, writeSkill } from "../support/skills.js";
import { HAVE_TEST_VENV, TEST_VENV_PYTHON } from "../support/testVenv.js";
import { BIN, mcpDaemon, serveClient, serveEnv, stopMcpDaemon } from "./support.js";

const MODERN = "2026-07-28";
const ERA_CLIENT = join(import.meta.dirname, "clients", "era_client.py");

type AnyResult = { content: { type: string; text?: string }[]; isError?: boolean; structuredContent?: Record<string, unknown> };
const texts = (result: AnyResult) => result.content.filter((part) => part.type === "text").map((part) => part.text!);

/** A v2 client pinned to 2026-07-28 on `albedo mcp serve` (a child process). */
async function modernStdio(dirs: SessionDirs, workspace: string): Promise<ModernClient> {
  const transport = new ModernStdio({ command: process.execPath, args: [BIN, "mcp", "serve", "--workspace", workspace], env: serveEnv(dirs) as Record<string, string>, cwd: dirs.root, stderr: "pipe" });
  const client = new ModernClient({ name: "albedo-era-test", version: "1.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(transport);
  return client;
}

const python = async (client: ModernClient, args: Record<string, unknown>) => (await client.callTool({ name: "python", arguments: args })) as unknown as AnyResult;

/** What clients compare to keep their prompt caches: each tool's name, title, description, input schema and annotations. */
function shapes(tools: readonly { name: string }[]): unknown[] {
  return tools.map((tool) => {
    const { name, title, description, inputSchema, annotations } = tool as Record<string, unknown>;
    return { name, title, description, inputSchema, annotations };
  });
}

describe("P-5 albedo mcp serve in the 2026-07-28 era (stdio)", () => {
  let dirs: SessionDirs;
  let client: ModernClient;

  beforeAll(async () => {
    dirs = await sessionDirs();
    writeSkill(roots.wsAgents(dirs.workspace), "demo", { description: "Tidy up the files of a folder.", body: "# Demo\n\nTidy up.\n" });
    client = await modernStdio(dirs, dirs.workspace);
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await dirs?.cleanup();
  });

  it("answers server/discover with its name and 2026-07-28; a first python call returns the session handle, a second on it keeps the state", async () => {
    expect(client.getProtocolEra()).toBe("modern");
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    expect(client.getServerVersion()?.name).toBe(SERVER_NAME);
    const first = await python(client, { code: "x = 1" });
    const handle = first.structuredContent?.session as string;
    expect(handle).toMatch(/^s-[\w-]{22}$/);
    expect(texts(first)).toContain(`session: ${handle}`);
    const second = await python(client, { code: "x + 1", session: handle });
    expect(texts(second)[0]).toBe("2\n");
    expect(second.structuredContent).toEqual({ session: handle, isError: false });
    // Over stdio the process is one session: the handle is optional.
    expect(texts(await python(client, { code: "x + 2" }))[0]).toBe("3\n");
  }, 120_000);

  it("an unknown handle is an isError result that says to start without one", async () => {
    const unknown = await python(client, { code: "x", session: "s-AAAAAAAAAAAAAAAAAAAAAA" });
    expect(unknown.isError).toBe(true);
    expect(texts(unknown)[0]).toMatch(/^session "s-A+" is unknown or closed .*call python without "session" to start a new session$/);
  });

  it("skills, prompts and resources are served in this era too", async () => {
    const loaded = (await client.callTool({ name: "skill", arguments: { name: "demo" } })) as unknown as AnyResult;
    expect(texts(loaded)[0]).toContain("Tidy up.");
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toContain("demo");
    const read = await client.readResource({ uri: "skill://demo/SKILL.md" });
    expect((read.contents[0] as { text: string }).text).toContain("# Demo");
  });

  it("the legacy suite's core holds in this era: an error is isError with its traceback, images are image content, a long cell sends progress, a cancelled call interrupts its cell", async () => {
    const failed = await python(client, { code: "1 / 0" });
    expect(failed.isError).toBe(true);
    expect(texts(failed)[0]).toContain("ZeroDivisionError");
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAEklEQVR4nGP4z8CAFWEXHbQSACj/P8Fu7N9hAAAAAElFTkSuQmCC";
    const shown = await python(client, { code: `from IPython.display import Image, display\nimport base64\ndisplay(Image(data=base64.b64decode("${png}")))\nprint("shown")` });
    expect(shown.content.filter((part) => part.type === "image")).toEqual([expect.objectContaining({ type: "image", mimeType: "image/png" })]);
    expect(texts(shown)[0]).toBe("shown\n");
    const seen: number[] = [];
    const slow = await client.callTool({ name: "python", arguments: { code: `import time; time.sleep(${(PYTHON_PROGRESS_INTERVAL_MS * 2.5) / 1000}); print('done')` } }, { onprogress: (progress) => seen.push(progress.progress) });
    expect(texts(slow as unknown as AnyResult)[0]).toBe("done\n");
    expect(seen.length).toBeGreaterThanOrEqual(1);
    const controller = new AbortController();
    const cancelled = client.callTool({ name: "python", arguments: { code: "import time\ntry:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    stopped = True\n    raise" } }, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    controller.abort("the user pressed stop");
    await expect(cancelled).rejects.toThrow();
    await poll(async () => texts(await python(client, { code: "print(globals().get('stopped', False))" }))[0] === "True\n", { what: "the cancelled cell's flag", timeoutMs: 30_000, intervalMs: 200 });
  }, 120_000);

  it("Skills over MCP in both eras: skills/list with the digests of the files on disk, skills/get, verified reads; a reload after an edit changes that file's digest and reaches a subscriptions/listen stream", async () => {
    const manifest = join(roots.wsAgents(dirs.workspace), "demo", "SKILL.md");
    const digest = () => `sha256:${createHash("sha256").update(readFileSync(manifest)).digest("hex")}`;
    const legacy = new ModernClient({ name: "albedo-era-test", version: "1.0.0" });
    await legacy.connect(new ModernStdio({ command: process.execPath, args: [BIN, "mcp", "serve", "--workspace", dirs.workspace], env: serveEnv(dirs) as Record<string, string>, cwd: dirs.root, stderr: "pipe" }));
    try {
      expect(legacy.getProtocolEra()).toBe("legacy");
      for (const host of [new SkillsClient(client), new SkillsClient(legacy)]) {
        const { skills, invalid } = await host.list();
        expect(invalid).toEqual([]);
        const demo = skills.find((entry) => entry.uri === "skill://demo/SKILL.md");
        expect(demo?.resources).toEqual([expect.objectContaining({ uri: "skill://demo/SKILL.md", digest: digest() })]);
        const { skill } = await host.get("skill://demo/SKILL.md");
        expect(await host.read(skill)).toMatchObject({ verified: true, body: "# Demo\n\nTidy up.\n" });
      }
      const before = digest();
      // The reload also reaches this client's subscriptions/listen stream as a tool-list change.
      let toolsChanged = 0;
      client.setNotificationHandler("notifications/tools/list_changed", () => void (toolsChanged += 1));
      const subscription = await client.listen({ toolsListChanged: true });
      writeFileSync(manifest, readFileSync(manifest, "utf8").replace("Tidy up.", "Tidy up, then sort."));
      await client.callTool({ name: "reload", arguments: {} });
      await poll(() => toolsChanged > 0, { what: "the reload's tool-list change on the listen stream" });
      await subscription.close();
      const after = (await new SkillsClient(client).list()).skills.find((entry) => entry.uri === "skill://demo/SKILL.md");
      expect(after!.resources).toEqual([expect.objectContaining({ uri: "skill://demo/SKILL.md", digest: digest() })]);
      expect(digest()).not.toBe(before);
    } finally {
      await legacy.close();
    }
  }, 120_000);

  it("tools/list is the same in both eras and on a fresh server: order, descriptions, schemas", async () => {
    const modern = shapes((await client.listTools()).tools);
    expect(modern.map((tool) => (tool as { name: string }).name)).toEqual(["python", "skill", "reload"]);
    const legacy = await serveClient(dirs, ["--workspace", dirs.workspace]);
    const again = await modernStdio(dirs, dirs.workspace);
    try {
      expect(legacy.client.getServerVersion()?.name).toBe(SERVER_NAME);
      expect(shapes((await legacy.client.listTools()).tools)).toEqual(modern);
      expect(shapes((await again.listTools()).tools)).toEqual(modern);
    } finally {
      await legacy.close();
      await again.close();
    }
  }, 120_000);
});

describe("P-5 the daemon's /mcp in the 2026-07-28 era", () => {
  let dirs: Dirs;
  let daemon: DaemonProcess;
  const open: { close(): Promise<void> }[] = [];

  beforeAll(async () => void ({ dirs, daemon } = await mcpDaemon(["--mcp-idle", "4"])), 120_000);

  afterAll(async () => await stopMcpDaemon({ dirs, daemon }, open));

  const endpoint = (workspace = dirs.workspace) => `${daemon.url}${MCP_PATH}?workspace=${encodeURIComponent(workspace)}`;
  const sessionIds = async () => ((await call(daemon, "GET", "/sessions")).body.sessions as { id: string }[]).map((session) => session.id);

  async function modernHttp(url = endpoint()): Promise<ModernClient> {
    const transport = new ModernHttp(new URL(url), { requestInit: { headers: { authorization: `Bearer ${daemon.token}` } } });
    const client = new ModernClient({ name: "albedo-era-test", version: "1.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(transport);
    open.push(client);
    return client;
  }

  it("two python calls on one handle keep the state; another handle is another kernel; an unknown handle is an isError result", async () => {
    const client = await modernHttp();
    expect(client.getProtocolEra()).toBe("modern");
    const first = await python(client, { code: "x = 1" });
    const handle = first.structuredContent?.session as string;
    expect(texts(first).at(-1)).toMatch(/a new kernel session: pass "session"/);
    expect(texts(await python(client, { code: "x + 1", session: handle }))[0]).toBe("2\n");
    const other = await python(client, { code: "print(globals().get('x', 'unset'))" });
    expect(other.structuredContent?.session).not.toBe(handle);
    expect(texts(other)[0]).toBe("unset\n");
    const unknown = await python(client, { code: "x", session: "s-AAAAAAAAAAAAAAAAAAAAAA" });
    expect(unknown.isError).toBe(true);
    expect(texts(unknown)[0]).toMatch(/call python without "session" to start a new session/);
  }, 120_000);

  it("Skills over MCP on /mcp in this era: skills/list lists the workspace's skills, directory reads list their files", async () => {
    writeSkill(roots.wsAgents(dirs.workspace), "tidy", { description: "Tidy a folder.", body: "# Tidy\n" });
    const host = new SkillsClient(await modernHttp());
    const { skills } = await host.list();
    expect(skills.map((entry) => entry.uri)).toContain("skill://tidy/SKILL.md");
    const { skill } = await host.get("skill://tidy/SKILL.md");
    expect(await host.read(skill)).toMatchObject({ verified: true, body: "# Tidy\n" });
  }, 120_000);

  it("a reload of a handle's session reaches a client listening on subscriptions/listen as list changes", async () => {
    const listener = await modernHttp();
    const heard: string[] = [];
    listener.setNotificationHandler("notifications/tools/list_changed", () => void heard.push("tools"));
    listener.setNotificationHandler("notifications/prompts/list_changed", () => void heard.push("prompts"));
    listener.setNotificationHandler("notifications/resources/list_changed", () => void heard.push("resources"));
    const subscription = await listener.listen({ toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true });
    expect(subscription.honoredFilter).toMatchObject({ toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true });
    try {
      const client = await modernHttp();
      const handle = (await python(client, { code: "1" })).structuredContent?.session as string;
      expect(heard).toEqual([]);
      writeSkill(roots.wsAgents(dirs.workspace), "listened", { description: "Appears after a reload.", body: "# Listened\n" });
      const reloaded = (await client.callTool({ name: "reload", arguments: { session: handle } })) as AnyResult;
      expect(reloaded.isError).not.toBe(true);
      await poll(() => ["tools", "prompts", "resources"].every((kind) => heard.includes(kind)), { what: "the three list changes on the listen stream" });
      // What the listener reads after the notice names the new skill.
      expect(JSON.stringify((await listener.listTools()).tools)).toContain("listened");
    } finally {
      await subscription.close();
    }
    expect(await subscription.closed).toBe("local");
  }, 120_000);

  it("a handle is bound to the workspace of the URL it was opened on: another ?workspace= does not find it", async () => {
    const other = join(dirs.root, "other");
    mkdirSync(other);
    const here = await modernHttp();
    const handle = (await python(here, { code: "secret = 7" })).structuredContent?.session as string;
    const there = await modernHttp(endpoint(other));
    const refused = await python(there, { code: "print(secret)", session: handle });
    expect(refused.isError).toBe(true);
    expect(texts(refused)[0]).toMatch(/unknown or closed/);
    expect(texts(await python(here, { code: "print(secret)", session: handle }))[0]).toBe("7\n");
  }, 120_000);

  it("tools/list is the same for a legacy client and a 2026-07-28 client of the same workspace", async () => {
    const modern = shapes((await (await modernHttp()).listTools()).tools);
    const legacy = new LegacyClient({ name: "albedo-era-test", version: "1.0.0" });
    await legacy.connect(new LegacyHttp(new URL(endpoint()), { requestInit: { headers: { authorization: `Bearer ${daemon.token}` } } }));
    open.push(legacy);
    expect(shapes((await legacy.listTools()).tools)).toEqual(modern);
    expect(modern.map((tool) => (tool as { name: string }).name)).toEqual(["python", "skill", "reload"]);
  }, 120_000);

  it("a handle idle for --mcp-idle closes with its session; it is then unknown", async () => {
    // A workspace of its own: no session kept ready by an earlier list is taken by the call.
    const alone = join(dirs.root, "idle");
    mkdirSync(alone);
    const client = await modernHttp(endpoint(alone));
    const before = await sessionIds();
    const handle = (await python(client, { code: "kept = 1" })).structuredContent?.session as string;
    const mine = (await sessionIds()).filter((id) => !before.includes(id));
    expect(mine).toHaveLength(1);
    // Each look is a call, which keeps a live handle busy: look less often than the idle time.
    let gone: AnyResult | undefined;
    await poll(async () => (gone = await python(client, { code: "print(kept)", session: handle })).isError === true, { what: "the idle handle to close", timeoutMs: 60_000, intervalMs: 6_000 });
    expect(texts(gone!)[0]).toMatch(/unknown or closed/);
    expect(await sessionIds()).not.toContain(mine[0]);
  }, 120_000);

  describe.skipIf(!HAVE_TEST_VENV)("with the official Python SDK client and the Tasks extension", () => {
    it("a long cell becomes a task that tasks/get answers; tasks/cancel interrupts one and the next call answers", async () => {
      const run = await runProgram(TEST_VENV_PYTHON, [ERA_CLIENT, "http", endpoint(), daemon.token], { env: process.env, timeoutMs: 180_000 });
      expect(run.code, run.stderr).toBe(0);
      expectTasks(JSON.parse(run.stdout) as EraRun);
    }, 200_000);
  });
});

describe.skipIf(!HAVE_TEST_VENV)("P-5 albedo mcp serve with the official Python SDK client and the Tasks extension", () => {
  let dirs: SessionDirs;
  beforeAll(async () => void (dirs = await sessionDirs()));
  afterAll(async () => await dirs?.cleanup());

  it("a long cell becomes a task that tasks/get answers; tasks/cancel interrupts one and the next call answers", async () => {
    const run = await runProgram(TEST_VENV_PYTHON, [ERA_CLIENT, "stdio", process.execPath, BIN, dirs.workspace], { env: serveEnv(dirs), timeoutMs: 180_000 });
    expect(run.code, run.stderr).toBe(0);
    expectTasks(JSON.parse(run.stdout) as EraRun);
  }, 200_000);
});

interface EraRun {
  protocol: string;
  tools: string[];
  handle: string;
  second: string[];
  second_session: string;
  unknown: { isError: boolean; text: string[] };
  long: string[];
  seen: { taskId: string; status: string }[];
  raw: { resultType: string; status: string };
  cancel: { status: string; statusMessage: string };
  after: string[];
  after_seconds: number;
  final: { status: string };
}

/** What era_client.py saw: the handle's state, the unknown handle, the task followed to its result, the cancelled task and the call after it. */
function expectTasks(seen: EraRun): void {
  expect(seen.protocol).toBe(MODERN);
  expect(seen.tools).toEqual(["python", "skill", "reload"]);
  expect(seen.second[0]).toBe("2\n");
  expect(seen.second_session).toBe(seen.handle);
  expect(seen.unknown.isError).toBe(true);
  expect(seen.unknown.text[0]).toMatch(/call python without "session"/);
  // The 7 s cell outlived PYTHON_TASK_AFTER_MS: a task, followed with tasks/get to the cell's own answer.
  expect(PYTHON_TASK_AFTER_MS).toBeLessThan(7000);
  expect(seen.seen.map((step) => step.status)).toEqual(["working", "completed"]);
  expect(seen.long[0]).toBe("slept 1\n");
  expect(seen.raw).toEqual({ resultType: "task", status: "working" });
  expect(seen.cancel.statusMessage).toMatch(/cancel/);
  // The interrupted cell saw its KeyboardInterrupt, the state stayed, and the task ended cancelled.
  expect(seen.after[0]).toBe("True 1\n");
  // Not a speed check: the cancelled cell would have slept 120 s; the next call did not wait for it.
  expect(seen.after_seconds).toBeLessThan(60);
  expect(seen.final.status).toBe("cancelled");
}
