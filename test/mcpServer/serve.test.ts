/**
 * albedo as an MCP server over stdio, driven by the official TypeScript SDK Client and by raw lines:
 * the real binary, a real (sandboxed) kernel, real skill files.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { CallToolResultSchema, ToolListChangedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_PYTHON_CODE_BYTES, MAX_PYTHON_TIMEOUT_S, MAX_QUEUED_PYTHON_CALLS, MCP_SERVE_MAX_MESSAGE_BYTES, PYTHON_PROGRESS_INTERVAL_MS, SERVER_NAME } from "../../src/mcpServer/index.js";
import { installVersion } from "../../src/platform/index.js";
import { sessionDirs, type SessionDirs } from "../session/fixtures.js";
import { roots, writeSkill } from "../support/skills.js";
import { runProgram } from "../support/cli.js";
import { poll } from "../support/poll.js";
import { HAVE_TEST_VENV, TEST_VENV_PYTHON } from "../support/testVenv.js";
import { BIN, processesMentioning, RawServe, serveClient, serveEnv, TINY_PNG_BASE64, type Served } from "./support.js";

let dirs: SessionDirs;
let served: Served;
/** A resource larger than one read page (64 KiB), to page through. */
const BIG = "0123456789abcdef".repeat(5000);

beforeAll(async () => {
  dirs = await sessionDirs();
  writeSkill(roots.wsAgents(dirs.workspace), "demo", { description: "Tidy up the files of a folder.", body: "# Demo\n\nTidy up.\n" });
  const skill = join(roots.wsAgents(dirs.workspace), "demo");
  writeFileSync(join(skill, "big.txt"), BIG);
  writeFileSync(join(skill, "logo.png"), Buffer.from(TINY_PNG_BASE64, "base64"));
  served = await serveClient(dirs, ["--workspace", dirs.workspace]);
}, 120_000);

afterAll(async () => {
  await served?.close();
  await dirs?.cleanup();
});

const text = (result: CallToolResult) => result.content.filter((part) => part.type === "text").map((part) => (part as { text: string }).text).join("");
const python = async (code: string, extra: Record<string, unknown> = {}) => (await served.client.callTool({ name: "python", arguments: { code, ...extra } })) as CallToolResult;

describe("X P-1 P-2 albedo mcp serve: the python tool", () => {
  it("lists python, skill (enum of enabled skills, read-only) and reload, with descriptions that say what the kernel is", async () => {
    const { tools } = await served.client.listTools();
    expect(served.client.getServerVersion()).toMatchObject({ name: SERVER_NAME, version: installVersion() });
    expect(tools.map((tool) => tool.name)).toEqual(["python", "skill", "reload"]);
    const [py, skill] = tools;
    expect(py!.description).toMatch(/state persists/i);
    expect(py!.description).toMatch(/sandbox/);
    expect(py!.description).toContain("`skills`");
    expect(skill!.annotations?.readOnlyHint).toBe(true);
    expect(py!.annotations?.readOnlyHint).toBe(false);
    expect((skill!.inputSchema.properties as Record<string, { enum?: string[] }>).name!.enum).toContain("demo");
  });

  it("runs cells whose state persists, with skills and commands in scope; stdout, the result and the traceback come back as text", async () => {
    expect(text(await python("x = 6 * 7\nprint('hello')\nx"))).toBe("hello\n42\n");
    expect(text(await python("print(x + 1, type(skills).__name__ != '', 'commands' in dir())"))).toBe("43 True True\n");
    const failed = await python("1 / 0");
    expect(failed.isError).toBe(true);
    expect(text(failed)).toContain("ZeroDivisionError");
  });

  it("returns a cell's images as MCP image content, checked and bounded", async () => {
    const result = await python(`from IPython.display import Image, display\nimport base64\ndisplay(Image(data=base64.b64decode("${TINY_PNG_BASE64}")))\nprint("shown")`);
    expect(result.isError).toBe(false);
    const images = result.content.filter((part) => part.type === "image");
    expect(images).toHaveLength(1);
    expect(images[0]).toMatchObject({ type: "image", mimeType: "image/png" });
    expect(text(result)).toBe("shown\n");
    expect(Buffer.from((images[0] as { data: string }).data, "base64").subarray(1, 4).toString()).toBe("PNG");
    const bad = await python(`from IPython.display import display\ndisplay({"image/png": "bm90IGEgcG5n"}, raw=True)`);
    expect(bad.content.filter((part) => part.type === "image")).toHaveLength(0);
    expect(text(bad)).toMatch(/image 1 of 1 dropped/);
  });

  it("sends progress notifications while a long cell runs, when the client sent a progress token", async () => {
    const seen: number[] = [];
    const result = await served.client.callTool({ name: "python", arguments: { code: `import time; time.sleep(${(PYTHON_PROGRESS_INTERVAL_MS * 2.5) / 1000}); print('done')` } }, CallToolResultSchema, {
      onprogress: (progress) => seen.push(progress.progress),
    });
    expect(text(result as CallToolResult)).toBe("done\n");
    expect(seen.length).toBeGreaterThanOrEqual(1);
  });

  it("a cancelled call interrupts its cell; the kernel and its state stay", async () => {
    const controller = new AbortController();
    const call = served.client.callTool({ name: "python", arguments: { code: "import time\ntry:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    interrupted = True\n    raise" } }, CallToolResultSchema, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    controller.abort("the user pressed stop");
    await expect(call).rejects.toThrow();
    let after = "";
    await poll(async () => (after = text(await python("print(globals().get('interrupted', False), x)"))).startsWith("True"), { what: "the interrupted cell's flag", timeoutMs: 30_000, intervalMs: 200 });
    expect(after).toBe("True 42\n");
  });

  it("a cell past its timeout_s is interrupted and answers so", async () => {
    const result = await python("import time; print('started', flush=True); time.sleep(60)", { timeout_s: 1.5 });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^Timed out after 1\.5 s \(timeout_s\) and interrupted/);
    expect(text(result)).toContain("started");
    const refused = await python("print(1)", { timeout_s: MAX_PYTHON_TIMEOUT_S + 1 });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^python: timeout_s:/);
  });

  it("a cell printing 100 MB answers with a bounded text that says how much was left out", async () => {
    const result = await python("import sys\nfor _ in range(100):\n    sys.stdout.write('x' * (1 << 20))\nprint('end')");
    const shown = text(result);
    expect(Buffer.byteLength(shown)).toBeLessThanOrEqual(16 * 1024);
    expect(shown).toMatch(/more left out: tool results are cut at/);
  }, 120_000);

  it("refuses 20 MB of code before it reaches the kernel, naming the bound", async () => {
    const result = await python(`# ${"y".repeat(20 * 1024 * 1024)}\nprint(1)`);
    expect(result.isError).toBe(true);
    expect(text(result)).toContain(`MAX_PYTHON_CODE_BYTES`);
    expect(text(result)).toMatch(/code is 20\.0 MB/);
    expect(MAX_PYTHON_CODE_BYTES).toBeLessThan(20 * 1024 * 1024);
  }, 60_000);

  it("queues concurrent calls in order, and refuses those past MAX_QUEUED_PYTHON_CALLS with a clear error", async () => {
    await python("order = []");
    const calls = Array.from({ length: 100 }, (_, i) => python(`import time; time.sleep(0.01); order.append(${i})`));
    const results = await Promise.all(calls);
    const refused = results.filter((result) => result.isError);
    expect(refused.length).toBeGreaterThan(0);
    for (const result of refused) expect(text(result)).toContain(`MAX_QUEUED_PYTHON_CALLS = ${MAX_QUEUED_PYTHON_CALLS}`);
    const ran = results.map((result, i) => (result.isError ? undefined : i)).filter((i) => i !== undefined);
    expect(ran.length).toBeGreaterThan(MAX_QUEUED_PYTHON_CALLS - 1);
    expect(text(await python("print(order)"))).toBe(`${JSON.stringify(ran).replace(/,/g, ", ")}\n`);
  }, 120_000);

  it("the served kernel is sandboxed: no home, no state dir, no network (not even the host's loopback)", async () => {
    // A server on the host's loopback: reachable from any process of the host, not from the sandbox's own network namespace.
    const listener = createServer((socket) => socket.end("host\n"));
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const port = (listener.address() as AddressInfo).port;
    mkdirSync(join(dirs.home, ".ssh"), { recursive: true });
    writeFileSync(join(dirs.home, ".ssh", "id_ed25519"), "PRIVATE KEY");
    const code = [
      "import os, socket",
      `print(os.path.exists(${JSON.stringify(join(dirs.home, ".ssh", "id_ed25519"))}), os.path.exists(${JSON.stringify(join(dirs.stateDir, "settings.json"))}))`,
      "s = socket.socket()",
      "s.settimeout(2)",
      `try:\n    s.connect(('127.0.0.1', ${port})); print('net')\nexcept OSError as e:\n    print('no net')`,
    ].join("\n");
    writeFileSync(join(dirs.stateDir, "settings.json"), "{}");
    try {
      expect(text(await python(code))).toBe("False False\nno net\n");
    } finally {
      listener.close();
    }
  });
});

describe("X P-2 P-3 P-4 albedo mcp serve: skills, prompts, resources and reload", () => {
  it("the skill tool returns the activation wrapped with the skill's dir and files; an unknown skill or bad arguments are an isError result the model reads", async () => {
    const result = (await served.client.callTool({ name: "skill", arguments: { name: "demo" } })) as CallToolResult;
    expect(text(result)).toMatch(/^<skill name="demo" dir="[^"]+demo"># Demo\n\nTidy up\.\n\nresources:\n- big\.txt\n- logo\.png<\/skill>$/);
    const unknown = (await served.client.callTool({ name: "skill", arguments: { name: "nope" } })) as CallToolResult;
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/^no enabled skill named "nope"; enabled: .*demo/);
    const badCode = (await served.client.callTool({ name: "python", arguments: { code: 5 } })) as CallToolResult;
    expect(badCode.isError).toBe(true);
    expect(text(badCode)).toMatch(/^python: code: /);
    // An unknown tool stays a protocol error: the client asked for something albedo does not offer.
    await expect(served.client.callTool({ name: "shell", arguments: {} })).rejects.toThrow(/no tool named "shell"/);
  });

  it("each user-invocable skill is a prompt whose get returns readable text: the request, the skill's source and its instructions", async () => {
    const { prompts } = await served.client.listPrompts();
    const demo = prompts.find((prompt) => prompt.name === "demo");
    expect(demo).toMatchObject({ description: "Tidy up the files of a folder.", arguments: [{ name: "arguments", required: false }] });
    const got = await served.client.getPrompt({ name: "demo", arguments: { arguments: "the downloads folder" } });
    const source = join(roots.wsAgents(dirs.workspace), "demo", "SKILL.md");
    expect(got.messages).toEqual([{
      role: "user",
      content: { type: "text", text: `/demo the downloads folder\n\nFollow the instructions of the skill "demo" (${source}) for: the downloads folder.\n\n# Demo\n\nTidy up.\n` },
    }]);
    const bare = await served.client.getPrompt({ name: "demo" });
    expect((bare.messages[0]!.content as { text: string }).text).toBe(`/demo\n\nFollow the instructions of the skill "demo" (${source}).\n\n# Demo\n\nTidy up.\n`);
  });

  it("lists skill files as skill:// resources, reads them in pages, binary as a blob, and refuses what is not a skill file", async () => {
    const { resources } = await served.client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(expect.arrayContaining(["skill://demo/SKILL.md", "skill://demo/big.txt", "skill://demo/logo.png"]));
    const first = await served.client.readResource({ uri: "skill://demo/big.txt" });
    const page = (first.contents[0] as { text: string }).text;
    expect(page.length).toBe(65536);
    const next = (first._meta as Record<string, unknown>)["albedo/next"] as string;
    expect(next).toBe("skill://demo/big.txt?offset=65536");
    const second = await served.client.readResource({ uri: next });
    expect(page + (second.contents[0] as { text: string }).text).toBe(BIG);
    expect(second._meta?.["albedo/next"]).toBeUndefined();
    const logo = await served.client.readResource({ uri: "skill://demo/logo.png" });
    expect(logo.contents[0]).toMatchObject({ mimeType: "image/png", blob: TINY_PNG_BASE64 });
    await expect(served.client.readResource({ uri: "skill://demo/../../../etc/passwd" })).rejects.toThrow(/invalid_params|forbidden/);
    await expect(served.client.readResource({ uri: "file:///etc/passwd" })).rejects.toThrow(/not a skill resource/);
    await expect(served.client.readResource({ uri: "skill://nope/SKILL.md" })).rejects.toThrow(/no enabled skill named "nope"/);
  });

  it("reload rereads the skills without restarting the kernel and tells the client its lists changed", async () => {
    let changed = 0;
    served.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => void (changed += 1));
    await python("kept = 'still here'");
    writeSkill(roots.wsAgents(dirs.workspace), "later", { description: "Added while the server ran." });
    const reloaded = (await served.client.callTool({ name: "reload", arguments: {} })) as CallToolResult;
    expect(text(reloaded)).toMatch(/^reloaded: \+1 skill \(later\), \d+ skills$/);
    await poll(() => changed > 0, { what: "tools/list_changed", timeoutMs: 10_000 });
    const { tools } = await served.client.listTools();
    expect((tools[1]!.inputSchema.properties as Record<string, { enum?: string[] }>).name!.enum).toContain("later");
    expect(text(await python("print(kept)"))).toBe("still here\n");
  });
});

describe("X P-1 albedo mcp serve: the connection", () => {
  it("takes the workspace from the client's first root when no --workspace is given", async () => {
    const other = join(dirs.root, "rooted");
    mkdirSync(other);
    const rooted = await serveClient(dirs, [], { roots: [other] });
    try {
      expect(text((await rooted.client.callTool({ name: "python", arguments: { code: "import os; print(os.getcwd())" } })) as CallToolResult)).toBe(`${other}\n`);
    } finally {
      await rooted.close();
    }
  });

  it("survives garbage on stdin, refuses a request before initialize, answers unknown methods and unknown cancels, and writes only protocol to stdout", async () => {
    const raw = new RawServe(dirs, ["--workspace", dirs.workspace]);
    try {
      raw.send("this is not json");
      raw.send("{\"jsonrpc\": \"2.0\", \"id\": ");
      raw.send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
      const early = await raw.answer(1);
      expect(early.error).toMatchObject({ message: expect.stringMatching(/initialize first/) });
      await raw.initialize(2);
      raw.send({ jsonrpc: "2.0", id: 3, method: "no/such/method" });
      expect((await raw.answer(3)).error).toMatchObject({ code: -32601 });
      raw.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 999, reason: "nothing" } });
      raw.send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "python", arguments: { code: "print('alive')" } } });
      expect(await raw.answer(4)).toMatchObject({ result: { content: [{ type: "text", text: "alive\n" }] } });
      // Every stdout line parsed as JSON-RPC (messages() throws otherwise); the garbage was said on stderr.
      expect(raw.messages().every((message) => message.jsonrpc === "2.0")).toBe(true);
      expect(raw.stderr).toMatch(/ignored input that is not a JSON-RPC message/);
    } finally {
      expect(await raw.close()).toBe(0);
    }
  }, 120_000);

  it("a line over MCP_SERVE_MAX_MESSAGE_BYTES closes the connection with one line on stderr, without holding it whole", async () => {
    const raw = new RawServe(dirs, ["--workspace", dirs.workspace]);
    try {
      await raw.initialize(1);
      raw.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "python", arguments: { code: `# ${"z".repeat(MCP_SERVE_MAX_MESSAGE_BYTES)}` } } });
    } finally {
      expect(await raw.close()).toBe(0);
    }
    expect(raw.stderr).toContain(`a message over ${MCP_SERVE_MAX_MESSAGE_BYTES} bytes (MCP_SERVE_MAX_MESSAGE_BYTES) arrived; the connection is closed`);
    expect(raw.messages().some((message) => message.id === 2)).toBe(false);
  }, 120_000);

  it("a client that disappears mid-cell: the cell ends with the kernel, which shuts down, and nothing is left running", async () => {
    const marker = join(dirs.root, "gone");
    mkdirSync(marker);
    const raw = new RawServe(dirs, ["--workspace", marker]);
    await raw.initialize(1);
    raw.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "python", arguments: { code: "import time; time.sleep(600)" } } });
    await poll(() => processesMentioning(marker).length > 1, { what: "the served kernel", timeoutMs: 60_000, intervalMs: 200 });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await raw.close()).toBe(0);
    expect(processesMentioning(marker)).toEqual([]);
  }, 120_000);
});

describe.skipIf(!HAVE_TEST_VENV)("X P-1 P-2 P-3 P-4 albedo mcp serve with the official Python SDK client", () => {
  it("initializes, lists the tools, runs cells with state and an image, gets a prompt and reads a resource", async () => {
    const run = await runProgram(TEST_VENV_PYTHON, [join(import.meta.dirname, "clients", "python_client.py"), "stdio", process.execPath, BIN, dirs.workspace], { env: serveEnv(dirs), timeoutMs: 120_000 });
    expect(run.code, run.stderr).toBe(0);
    const seen = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(seen).toMatchObject({ tools: ["python", "skill", "reload"], first: ["42\n"], second: ["43\n"], images: ["image/png"], resource: expect.stringContaining("# Demo") });
    expect(seen.prompt).toMatch(/^\/demo from python\n\nFollow the instructions of the skill "demo" \(.*SKILL\.md\) for: from python\.\n\n# Demo/);
  }, 150_000);
});
