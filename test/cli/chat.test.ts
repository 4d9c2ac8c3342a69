import { spawn } from "node:child_process";
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call, ROOT } from "../daemon/support/daemon.js";
import { daemonFixture } from "../daemon/support/fixture.js";
import { errorBody, startFakeAnthropic, type FakeAnthropic, type FakeAnthropicReply } from "../model/fakeAnthropic.js";
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from "../model/fakeOpenAI.js";
import { KEY, KEY_ENV } from "../model/support.js";
import { sessionDirs, type SessionDirs } from "../session/fixtures.js";
import { roots, writeSkill } from "../support/skills.js";
import { TINY_PNG_BASE64 } from "../mcpServer/support.js";
import { EVERYTHING } from "../mcp/support.js";
import { poll } from "../support/poll.js";

const BIN = join(ROOT, "bin", "albedo");
/** Bound on one CLI run (kernel boot included). */
const CLI_TIMEOUT_MS = 60_000;
const BODY = "# PDF processing\n\nFill the form.";

let server: FakeOpenAI;
let dirs: SessionDirs;

beforeAll(async () => {
  server = await startFakeOpenAI();
});
afterAll(async () => {
  await server?.close();
});
beforeEach(async () => {
  dirs = await sessionDirs();
  server.requests.length = 0;
  writeSkill(roots.wsAgents(dirs.workspace), "pdf-processing", { body: `${BODY}\n` });
});
afterEach(async () => {
  await dirs?.cleanup();
});

async function globalSettings(settings: object): Promise<void> {
  await writeFile(join(dirs.stateDir, "settings.json"), JSON.stringify(settings), { mode: 0o600 });
}

function openaiModel(extra: object = {}): object {
  return { model: { provider: "openai", base_url: server.baseUrl, name: "fake", api_key_env: KEY_ENV, mode: "tool", ...extra } };
}

/** Runs `albedo chat ARGS` in the workspace with the key in its environment; returns its exit code and output. */
async function chat(args: string[], env: NodeJS.ProcessEnv = { [KEY_ENV]: KEY }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, "chat", ...args], {
    cwd: dirs.workspace,
    env: { ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.stateDir, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), CLI_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

const skillCall: FakeReply = { kind: "reply", toolCalls: [{ id: "c1", name: "skill", arguments: JSON.stringify({ name: "pdf-processing" }) }] };
const answer = (text: string): FakeReply => ({ kind: "reply", text });
const toolOffered = (index: number, name: string) => (server.requests[index]!.body.tools ?? []).find((t: { function: { name: string } }) => t.function.name === name)?.function;

describe("X O-5 O-6 albedo chat, the seed's acceptance through the real binary", () => {
  it("global on: the system prompt lists the skill and the skill tool's enum holds it; a pull draws 'used skill NAME · SIZE' and the result carries body and dir", async () => {
    await globalSettings({ ...openaiModel(), skills: { on: ["pdf-processing"] } });
    server.enqueue(skillCall, answer("Filled."));
    const run = await chat(["fill the form"]);
    expect(run.code, run.stderr).toBe(0);
    expect(server.requests[0]!.body.messages[0].content).toContain("<name>pdf-processing</name>");
    expect(toolOffered(0, "skill").parameters.properties.name.enum).toContain("pdf-processing");
    expect(run.stdout).toMatch(/^used skill pdf-processing · \d+ B$/m);
    const result = server.requests[1]!.body.messages.at(-1).content as string;
    expect(result).toContain(BODY);
    expect(result).toContain(`dir="${join(dirs.workspace, ".agents", "skills", "pdf-processing")}"`);
  });

  it("nothing on: no skill tool and no catalog section", async () => {
    await globalSettings({ ...openaiModel(), skills: { default: "off" } });
    server.enqueue(answer("ok"));
    expect((await chat(["hi"])).code).toBe(0);
    expect(toolOffered(0, "skill")).toBeUndefined();
    expect(server.requests[0]!.body.messages[0].content).not.toContain("<available_skills>");
  });

  it("a project off beats a global on", async () => {
    await globalSettings({ ...openaiModel(), skills: { on: ["pdf-processing"] } });
    await mkdir(join(dirs.workspace, ".albedo"), { recursive: true });
    await writeFile(join(dirs.workspace, ".albedo", "settings.json"), JSON.stringify({ skills: { off: ["pdf-processing"] } }));
    server.enqueue(answer("ok"));
    expect((await chat(["hi"])).code).toBe(0);
    expect(toolOffered(0, "skill")?.parameters.properties.name.enum ?? []).not.toContain("pdf-processing");
    expect(server.requests[0]!.body.messages[0].content).not.toContain("<name>pdf-processing</name>");
  });
});

describe("X albedo chat one-shot", () => {
  it("--json prints one O-9 row per line and exits 0 for a completed turn", async () => {
    await globalSettings(openaiModel());
    server.enqueue(skillCall, answer("Done."));
    const run = await chat(["--json", "go"]);
    expect(run.code, run.stderr).toBe(0);
    const rows = run.stdout.trim().split("\n").map((line) => JSON.parse(line) as { kind: string });
    expect(rows.map((row) => row.kind)).toEqual(["user", "skill", "assistant", "end"]);
    expect(rows[1]).toMatchObject({ skill: "pdf-processing", via: "tool", already_loaded: false, bytes: expect.any(Number) });
    // The fake server reported no usage: the end line says so with null, not with zeros.
    expect(rows[3]).toEqual({ kind: "end", result: "completed", usage: null });
  });

  it("a slash line is a user activation: its row says via user", async () => {
    await globalSettings(openaiModel());
    server.enqueue(answer("On it."));
    const run = await chat(["--json", "/pdf-processing fill it"]);
    expect(run.code, run.stderr).toBe(0);
    const rows = run.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rows[0]).toMatchObject({ kind: "user", text: "/pdf-processing fill it" });
    expect(rows[1]).toMatchObject({ kind: "skill", via: "user" });
    expect(JSON.parse(server.requests[0]!.body.messages.at(-1).content).skill_activation).toMatchObject({ name: "pdf-processing", arguments: "fill it" });
  });

  it("B the model's prose reaches the terminal with control and bidirectional characters shown, not sent", async () => {
    await globalSettings(openaiModel());
    const tricky = "Run \u202Etxt.exe\u202C now \u2066x\u2069\u200F \x1b[2J done.";
    server.enqueue(answer(tricky), answer(tricky));
    const run = await chat(["hi"]);
    expect(run.code, run.stderr).toBe(0);
    // eslint-disable-next-line no-control-regex
    expect(run.stdout + run.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
    expect(run.stdout).toContain(String.raw`Run \u202etxt.exe\u202c now \u2066x\u2069\u200f ␛[2J done.`);
    const json = await chat(["--json", "hi"]);
    expect(json.stdout).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
    const rows = json.stdout.trim().split("\n").map((line) => JSON.parse(line) as { kind: string; text?: string });
    expect(rows.find((row) => row.kind === "assistant")?.text).toBe(tricky);
  });

  it("exits 1 when the turn fails (HTTP error after retries), saying why", async () => {
    await globalSettings(openaiModel());
    server.enqueue({ kind: "status", status: 400, body: '{"error": {"message": "no such model"}}' });
    const run = await chat(["hi"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/error: .*no such model/);
  });

  it("a missing key variable fails before any request, with a clear error", async () => {
    await globalSettings(openaiModel());
    const run = await chat(["hi"], { [KEY_ENV]: "" });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(new RegExp(`error: .*${KEY_ENV}`));
    expect(server.requests).toHaveLength(0);
  });

  it("/model shows provider, base URL and model name, never the key", async () => {
    await globalSettings(openaiModel());
    const run = await chat(["/model"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(server.baseUrl);
    expect(run.stdout).toContain("fake");
    expect(run.stdout).not.toContain(KEY);
    // Every value on its key's line, context_tokens too.
    expect(run.stdout).toMatch(/^context_tokens +\d+$/m);
  });

  it("runs with the stub model and its shipped example script, no key needed", async () => {
    await globalSettings({ model: { provider: "stub", script: join(ROOT, "priv", "model", "stub-example.json"), mode: "tool" } });
    const run = await chat(["what does the research skill say?"], {});
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^used skill research · [\d.]+ KB$/m);
  });
});

describe("I-2 I-3 albedo chat and a cell's images", () => {
  const showTiny = `from IPython.display import display\ndisplay({'image/png': ${JSON.stringify(TINY_PNG_BASE64)}, 'text/plain': '<stand-in>'}, raw=True)\nprint('shown')`;
  const pythonCall: FakeReply = { kind: "reply", toolCalls: [{ id: "p1", name: "python", arguments: JSON.stringify({ code: showTiny }) }] };

  it("prints the output's image as a label with the file it was kept in; the model received it as an image_url part", async () => {
    await globalSettings(openaiModel());
    server.enqueue(pythonCall, answer("A dot."));
    const run = await chat(["draw"]);
    expect(run.code, run.stderr).toBe(0);
    const label = /^ {2}\[image 1 · 8×8 PNG · 75 B\] (\S+\/images\/[0-9a-f]{64}\.png)$/m.exec(run.stdout);
    expect(label, run.stdout).not.toBeNull();
    expect((await readFile(label![1]!)).equals(Buffer.from(TINY_PNG_BASE64, "base64"))).toBe(true);
    expect(run.stdout).toMatch(/^ {2}shown$/m);
    const parts = server.requests[1]!.body.messages.flatMap((m: { content: unknown }) => (Array.isArray(m.content) ? m.content : []));
    expect(parts.filter((part: { type: string }) => part.type === "image_url")).toHaveLength(1);
  });

  it("O-7 a stub script's expect_tool answers the python step that showed an image", async () => {
    const script = join(dirs.stateDir, "stub-image.json");
    await writeFile(script, JSON.stringify({ replies: [{ tool_calls: [{ name: "python", arguments: { code: showTiny } }] }, { expect_tool: "python", text: "Saw the dot." }] }));
    await globalSettings({ model: { provider: "stub", script, mode: "code" } });
    const run = await chat(["draw"], {});
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/\[image 1 · 8×8 PNG · 75 B\]/);
    expect(run.stdout).toMatch(/^Saw the dot\.$/m);
  });

  it("O-7 a turn that needs more replies than the stub script has fails as the stub docs say: no reply left, naming the call", async () => {
    const script = join(dirs.stateDir, "stub-short.json");
    await writeFile(script, JSON.stringify({ replies: [{ tool_calls: [{ name: "python", arguments: { code: "print('ran')" } }] }] }));
    await globalSettings({ model: { provider: "stub", script, mode: "code" } });
    const run = await chat(["go"], {});
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toContain(`the stub script ${script} has no reply left: its 1 replies were all used, and this is call 2`);
  });

  it("--json rows carry the images' references", async () => {
    await globalSettings(openaiModel({ images: false }));
    server.enqueue(pythonCall, answer("Noted."));
    const run = await chat(["--json", "draw"]);
    expect(run.code, run.stderr).toBe(0);
    const output = run.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>).find((row) => row.kind === "output");
    expect(output).toMatchObject({ images: [{ id: expect.stringMatching(/^[0-9a-f]{64}$/), mime: "image/png", width: 8, height: 8, bytes: 75 }] });
    // model.images false: the model got a note, no part.
    const sent = JSON.stringify(server.requests[1]!.body.messages);
    expect(sent).not.toContain("image_url");
    expect(sent).toContain("not sent: model.images is false");
  });
});

describe("M-5 O-10 albedo chat: an MCP call's row, and the turn's usage in --json", () => {
  const mcpSettings = (mode: "code" | "tool") => ({ ...openaiModel({ mode }), mcp: { servers: { everything: { command: EVERYTHING } } } });
  const used = { prompt_tokens: 1_200, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 1_000 } };

  it("a call from the model's Python prints its row between the code and the output, as the transcript has it", async () => {
    await globalSettings(mcpSettings("code"));
    const code = 'print(await mcp.call("everything.echo", {"message": "hi"}))';
    server.enqueue({ kind: "reply", toolCalls: [{ id: "p1", name: "python", arguments: JSON.stringify({ code }) }] }, answer("Echoed."));
    const run = await chat(["echo hi"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^python:\n {2}print\(await mcp\.call.*\nused everything\.echo · \d+ B\n {2}Echo: hi\n/m);
  });

  it("a call as a function tool prints its row too; --json ends with the turn's usage, summed over its model calls", async () => {
    await globalSettings(mcpSettings("tool"));
    const echo: FakeReply = { kind: "reply", toolCalls: [{ id: "m1", name: "mcp__everything__echo", arguments: JSON.stringify({ message: "hi" }) }], usage: used };
    server.enqueue(echo, { kind: "reply", text: "Echoed.", usage: { prompt_tokens: 1_300, completion_tokens: 4 } });
    const run = await chat(["echo hi"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^used everything\.echo · \d+ B$/m);
    expect(run.stdout.trim().split("\n").at(-1)).toBe("usage: 2,500 input tokens (1,000 read from cache, 0 written to it), 13 output, 2 model calls");

    server.enqueue(echo, { kind: "reply", text: "Echoed.", usage: { prompt_tokens: 1_300, completion_tokens: 4 } });
    const json = await chat(["--json", "echo hi"]);
    expect(json.code, json.stderr).toBe(0);
    const rows = json.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rows.map((row) => row.kind)).toEqual(["user", "mcp", "assistant", "end"]);
    expect(rows[1]).toMatchObject({ server: "everything", tool: "echo", via: "tool", is_error: false });
    expect(rows.at(-1)).toEqual({
      kind: "end",
      result: "completed",
      usage: { input_tokens: 2_500, output_tokens: 13, cache_read_tokens: 1_000, cache_write_tokens: 0, model_calls: 2 },
    });
  });
});

describe("O-7 B the API key stays secret", () => {
  it("an unsandboxed kernel does not inherit it either, and neither the output nor any file in the state dir holds it", async () => {
    await globalSettings({ ...openaiModel({ mode: "code" }) });
    server.enqueue({ kind: "reply", toolCalls: [{ id: "p", name: "python", arguments: JSON.stringify({ code: `import os\nprint(sorted(k for k in os.environ if k == ${JSON.stringify(KEY_ENV)}))` }) }] }, answer("ok"));
    const run = await chat(["--json", "--sandbox", "off", "show env"]);
    expect(run.code, run.stderr).toBe(0);
    expect(server.requests[1]!.body.messages.at(-1).content).toBe("[]\n");
    expect(run.stdout + run.stderr).not.toContain(KEY);
    for (const file of await filesUnder(dirs.stateDir)) expect(await readFile(file, "latin1"), file).not.toContain(KEY);
    expect(server.requests[0]!.authorization).toBe(`Bearer ${KEY}`);
  });
});

async function filesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const path = join(dir, name);
    const info = await stat(path).catch(() => undefined);
    if (info?.isDirectory()) found.push(...(await filesUnder(path)));
    else if (info?.isFile()) found.push(path);
  }
  return found;
}

describe("X D-5 albedo chat attached to a running daemon", () => {
  const fixture = daemonFixture();

  it("sends the input to the daemon's session; rows come from its stream; the session closes afterwards", async () => {
    const daemonDirs = fixture.dirs;
    writeSkill(join(daemonDirs.workspace, ".agents", "skills"), "pdf-processing", { body: `${BODY}\n` });
    await writeFile(join(daemonDirs.state, "settings.json"), JSON.stringify(openaiModel()), { mode: 0o600 });
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"], { [KEY_ENV]: KEY });
    server.enqueue(skillCall, answer("Filled on the daemon."));
    const child = spawn(process.execPath, [BIN, "chat", "--json", "fill the form"], {
      cwd: daemonDirs.workspace,
      env: { ...process.env, HOME: daemonDirs.home, ALBEDO_HOME: daemonDirs.state },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code, stderr).toBe(0);
    const rows = stdout.trim().split("\n").map((line) => JSON.parse(line) as { kind: string; text?: string });
    expect(rows.map((row) => row.kind)).toEqual(["user", "skill", "assistant", "end"]);
    expect(rows[2]!.text).toBe("Filled on the daemon.");
    expect((await call(daemon, "GET", "/sessions")).body.sessions).toEqual([]);
  });

  it("D-2 the daemon lists the chat's session as the chat's while its turn runs", async () => {
    const daemonDirs = fixture.dirs;
    await writeFile(join(daemonDirs.state, "settings.json"), JSON.stringify(openaiModel()), { mode: 0o600 });
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"], { [KEY_ENV]: KEY });
    server.enqueue({ kind: "hang" });
    const child = spawn(process.execPath, [BIN, "chat", "hello"], { cwd: daemonDirs.workspace, env: { ...process.env, HOME: daemonDirs.home, ALBEDO_HOME: daemonDirs.state }, stdio: "ignore" });
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    try {
      await poll(() => server.requests.length > 0, { what: "the chat's turn to reach the model", timeoutMs: 60_000 });
      const sessions = (await call(daemon, "GET", "/sessions")).body.sessions;
      expect(sessions).toEqual([expect.objectContaining({ client: "chat", workspace: daemonDirs.workspace })]);
      expect((await call(daemon, "POST", `/sessions/${sessions[0].id}/interrupt`)).status).toBe(204);
      expect(await exited).toBe(1);
    } finally {
      child.kill("SIGKILL");
    }
  });
});

/** Runs `albedo chat` in a pseudo-terminal through test/support/pty_driver.py, following `steps`. */
async function interactive(steps: object[]): Promise<{ ok: boolean; failed_step: number | null; exit: number | null; output: string }> {
  const driver = join(ROOT, "test", "support", "pty_driver.py");
  const child = spawn("python3", [driver, JSON.stringify(steps), "--", process.execPath, BIN, "chat"], {
    cwd: dirs.workspace,
    env: { ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.stateDir, [KEY_ENV]: KEY, TERM: "xterm" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  await new Promise((resolve) => child.on("close", resolve));
  return JSON.parse(stdout);
}

describe("X albedo chat interactive (through a pty)", () => {
  it("streams prose, shows used-skill rows on their own line, completes slash commands; Ctrl-C interrupts a turn, a second quits", async () => {
    await globalSettings(openaiModel());
    server.enqueue(skillCall, answer("Form filled."), {
      kind: "reply", toolCalls: [{ id: "p", name: "python", arguments: JSON.stringify({ code: "import time\nprint('sleeping', flush=True)\ntime.sleep(60)" }) }],
    });
    const run = await interactive([
      { expect: "albedo chat \\(embedded\\)" },
      { expect: "› " },
      { send: "fill the form\r" },
      { expect: "\r?\nused skill pdf-processing · \\d+ B\r?\n" },
      { expect: "Form filled\\." },
      { expect: "› " },
      { send: "/pdf-pro\t" },
      { expect: "/pdf-processing" },
      { send: "\u0015sleep please\r" },
      { expect: "sleeping", timeout: 30 },
      { send: "\u0003" },
      { expect: "interrupting" },
      { expect: "\\[interrupted\\]" },
      { send: "\u0003" },
      { wait_exit: true, timeout: 20 },
    ]);
    expect(run.ok, `step ${run.failed_step}: ${JSON.stringify(run.output.slice(-1500))}`).toBe(true);
    expect(run.exit).toBe(0);
  });

  it("Ctrl-C at the prompt drops the typed line, as the console does; two Tabs in one read complete instead of inserting a Tab", async () => {
    await globalSettings(openaiModel());
    const run = await interactive([
      { expect: "› " },
      { send: "zz = 5" },
      { expect: "zz = 5" },
      { send: "\u0003" },
      { expect: "press Ctrl-C again to quit" },
      { send: "\r" },
      { send: "/pdf-pro" },
      { expect: "/pdf-pro" },
      // Both Tabs arrive in one read, as a fast double tap does.
      { send: "\t\t" },
      { expect: "/pdf-processing" },
      { send: "\u0015" },
      // The Enter above disarmed the quit: this Ctrl-C drops the line again, the next one quits.
      { send: "\u0003" },
      { expect: "\\(press Ctrl-C again to quit\\)", new: true },
      { send: "\u0003" },
      { wait_exit: true, timeout: 20 },
    ]);
    expect(run.ok, `step ${run.failed_step}: ${JSON.stringify(run.output.slice(-1500))}`).toBe(true);
    expect(run.exit).toBe(0);
    // Nothing was sent: the dropped line never became a turn.
    expect(server.requests).toHaveLength(0);
    expect(run.output).not.toContain("\t");
  });

  it("M-5 an MCP call the running cell makes prints its row above the ticker, which goes on counting", async () => {
    await globalSettings({ ...openaiModel({ mode: "code" }), mcp: { servers: { everything: { command: EVERYTHING } } } });
    const code = 'import time\ntime.sleep(2.5)\nprint(await mcp.call("everything.echo", {"message": "hi"}))\ntime.sleep(1)';
    server.enqueue({ kind: "reply", toolCalls: [{ id: "p", name: "python", arguments: JSON.stringify({ code }) }] }, answer("Echoed."));
    const run = await interactive([
      { expect: "› " },
      { send: "echo hi\r" },
      { expect: "python: running \\(Ctrl-C interrupts\\) [1-9]\\.\\ds", timeout: 30 },
      // The row, then at once the ticker again, past the seconds the cell slept before the call.
      { expect: "used everything\\.echo · \\d+ B\r?\n\r\u001b\\[2Kpython: running \\(Ctrl-C interrupts\\) [2-9]\\.\\ds", timeout: 30 },
      { expect: "  Echo: hi\r?\n", timeout: 30 },
      { expect: "Echoed\\." },
      { send: "\u0003" },
      { send: "\u0003" },
      { wait_exit: true, timeout: 20 },
    ]);
    expect(run.ok, `step ${run.failed_step}: ${JSON.stringify(run.output.slice(-1500))}`).toBe(true);
  });

  it("a long python call shows a ticker with the elapsed seconds until its output row comes", async () => {
    await globalSettings(openaiModel());
    server.enqueue({ kind: "reply", toolCalls: [{ id: "p", name: "python", arguments: JSON.stringify({ code: "import time\ntime.sleep(4)\nprint('wo' + 'ke')" }) }] }, answer("Slept well."));
    const run = await interactive([
      { expect: "› " },
      { send: "take a nap\r" },
      { expect: "python: running \\(Ctrl-C interrupts\\) [1-9]\\.\\ds", timeout: 30 },
      { expect: "  woke\r?\n", timeout: 30 },
      { expect: "Slept well\\." },
      { send: "\u0003" },
      { send: "\u0003" },
      { wait_exit: true, timeout: 20 },
    ]);
    expect(run.ok, `step ${run.failed_step}: ${JSON.stringify(run.output.slice(-1500))}`).toBe(true);
    // The ticker's line is cleared before the output row, which starts a line of its own.
    expect(run.output).toMatch(/\r\u001b\[2K {2}woke\r?\n/);
  });
});

describe("O-10 I-2 albedo chat with provider anthropic, through the real binary and the real SDK", () => {
  let claude: FakeAnthropic;
  beforeAll(async () => {
    claude = await startFakeAnthropic();
  });
  afterAll(async () => {
    await claude?.close();
  });
  beforeEach(() => {
    claude.requests.length = 0;
  });
  const anthropicModel = (extra: object = {}) => ({ model: { provider: "anthropic", base_url: claude.baseUrl, name: "claude-fake", api_key_env: KEY_ENV, mode: "tool", ...extra } });
  const say = (text: string): FakeAnthropicReply => ({ kind: "reply", text, usage: { input_tokens: 40, output_tokens: 5, cache_read_input_tokens: 900 } });
  const resultsOf = (index: number) => (claude.requests[index]!.body.messages.at(-1).content as { type: string }[]).filter((block) => block.type === "tool_result") as any[];

  it("tool mode: a skill pull through the skill tool, message[0] as the system param, tools with input_schema, the key in x-api-key only", async () => {
    await globalSettings({ ...anthropicModel(), skills: { on: ["pdf-processing"] } });
    claude.enqueue({ kind: "reply", toolUses: [{ id: "toolu_s", name: "skill", input: JSON.stringify({ name: "pdf-processing" }) }] }, say("Filled."));
    const run = await chat(["fill the form"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^used skill pdf-processing · \d+ B$/m);
    expect(run.stdout).toContain("Filled.");
    const [first, second] = claude.requests;
    expect(first!.body.system[0].text).toContain("<name>pdf-processing</name>");
    expect(first!.body.tools.find((tool: { name: string }) => tool.name === "skill").input_schema.properties.name.enum).toContain("pdf-processing");
    const [result] = resultsOf(1);
    expect(result).toMatchObject({ tool_use_id: "toolu_s" });
    expect(JSON.stringify(result.content)).toContain("Fill the form.");
    for (const sent of [first!, second!]) {
      expect(sent.headers["x-api-key"]).toBe(KEY);
      expect(sent.headers.authorization).toBeUndefined();
    }
  });

  it("code mode: the model's Python runs in the kernel and its output comes back as the call's tool_result", async () => {
    await globalSettings(anthropicModel({ mode: "code" }));
    claude.enqueue({ kind: "reply", text: "Computing.", toolUses: [{ id: "toolu_p", name: "python", input: JSON.stringify({ code: "print(6 * 7)" }) }] }, say("It is 42."));
    const run = await chat(["--json", "what is six times seven"]);
    expect(run.code, run.stderr).toBe(0);
    const rows = run.stdout.trim().split("\n").map((line) => JSON.parse(line) as { kind: string });
    expect(rows.map((row) => row.kind)).toEqual(["user", "assistant", "code", "output", "assistant", "end"]);
    expect(claude.requests[0]!.body.tools.map((tool: { name: string }) => tool.name)).toEqual(["python"]);
    const [result] = resultsOf(1);
    expect(result).toMatchObject({ tool_use_id: "toolu_p" });
    expect(JSON.stringify(result.content)).toContain("42");
  });

  it("an image a cell shows goes to the model inside the python call's tool_result", async () => {
    await globalSettings(anthropicModel({ mode: "code" }));
    const showTiny = `from IPython.display import display\ndisplay({'image/png': ${JSON.stringify(TINY_PNG_BASE64)}, 'text/plain': '<stand-in>'}, raw=True)\nprint('shown')`;
    claude.enqueue({ kind: "reply", toolUses: [{ id: "toolu_i", name: "python", input: JSON.stringify({ code: showTiny }) }] }, say("A dot."));
    const run = await chat(["show me"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/\[image 1 · 8×8 PNG · 75 B\]/);
    const last = claude.requests[1]!.body.messages.at(-1);
    expect(last.content.map((block: { type: string }) => block.type)).toEqual(["tool_result"]);
    const parts = last.content[0].content as { type: string; source?: { media_type: string } }[];
    expect(parts.map((part) => part.type)).toEqual(["text", "text", "image"]);
    expect(parts[2]!.source?.media_type).toBe("image/png");
  });

  it("the end of the chat prints the tokens the turn used, cache reads and writes included", async () => {
    await globalSettings(anthropicModel());
    claude.enqueue(
      { kind: "reply", toolUses: [{ id: "toolu_r", name: "read", input: JSON.stringify({ path: "nowhere.txt" }) }], usage: { input_tokens: 30, output_tokens: 8, cache_creation_input_tokens: 1_500 } },
      say("Nothing there."),
    );
    const run = await chat(["read it"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim().split("\n").at(-1)).toBe("usage: 2,470 input tokens (900 read from cache, 1,500 written to it), 13 output, 2 model calls");
  });

  it("an overloaded server: the SDK retries, then the turn fails with the server's reason", async () => {
    await globalSettings(anthropicModel());
    const overloaded = { kind: "status", status: 529, headers: { "retry-after": "0" }, body: JSON.stringify(errorBody("overloaded_error", "Overloaded")) } as const;
    claude.enqueue(overloaded, overloaded, overloaded);
    const run = await chat(["hi"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/error: .*HTTP 529: Overloaded/);
    expect(claude.requests).toHaveLength(3);
  });

  it("a missing key variable fails before any request; /model shows provider, base URL and model, never the key", async () => {
    await globalSettings(anthropicModel({ api_key_env: undefined }));
    const missing = await chat(["hi"], { ANTHROPIC_API_KEY: "" });
    expect(missing.code).toBe(1);
    expect(missing.stdout).toMatch(/error: .*ANTHROPIC_API_KEY/);
    expect(claude.requests).toHaveLength(0);
    const shown = await chat(["/model"], { ANTHROPIC_API_KEY: KEY });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^provider +anthropic$/m);
    expect(shown.stdout).toContain(claude.baseUrl);
    expect(shown.stdout).toContain("claude-fake");
    expect(shown.stdout).not.toContain(KEY);
  });
});

