/**
 * MCP tools from a real sandboxed kernel (M-3, M-5): the session starts the servers its global
 * settings configure, the kernel gets an `mcp` namespace over its RPC channel, typed methods come
 * from the tools' input schemas, and interrupting a cell cancels its call on the server.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpServerEntry } from "../../src/mcp/index.js";
import { poll } from "../support/poll.js";
import { resolve } from "node:path";
import { EVERYTHING, raw } from "../mcp/support.js";
import { HAVE_TEST_VENV, TEST_VENV_PYTHON } from "../support/testVenv.js";
import { run, sessionsPerTest, type SessionDirs } from "./fixtures.js";
import type { Session } from "../../src/session/index.js";
import { reloadText } from "../../src/commands/text.js";

const sessions = sessionsPerTest();
const HOST_SECRET = "mcp-host-secret-7f3a";

function configure(dirs: SessionDirs, servers: Record<string, McpServerEntry>): void {
  writeFileSync(join(dirs.stateDir, "settings.json"), JSON.stringify({ mcp: { servers } }));
}

/** How a cell that fails ends: its error's name and its traceback as a person reads it (colours removed). */
async function failure(session: Session, code: string): Promise<{ ename: string; traceback: string }> {
  const future = session.kernel.execute(code);
  let traceback = "";
  future.onOutput((output) => {
    // eslint-disable-next-line no-control-regex
    if (output.header.msg_type === "error") traceback = ((output.content as { traceback: string[] }).traceback ?? []).join("\n").replace(/\u001b\[[0-9;]*m/g, "");
  });
  const reply = (await future.done) as { ename?: string };
  return { ename: reply.ename ?? "", traceback };
}

function twoServers(dirs: SessionDirs): void {
  configure(dirs, {
    everything: { command: EVERYTHING },
    raw: raw("normal", { env: { RECORD: join(dirs.root, "record.txt"), SECRET: { from_env: "MCP_TEST_SECRET" } } }),
  });
}

// The runtime's environment holds the secret, as a daemon's would; the servers read it by name.
beforeAll(() => void (process.env.MCP_TEST_SECRET = HOST_SECRET));
afterAll(() => void delete process.env.MCP_TEST_SECRET);

describe("M-3 the mcp namespace in a sandboxed kernel", () => {
  it("lists the servers and calls tools by typed method and by name, with results shaped as M-3 says", async () => {
    const { session } = await sessions.open(twoServers);
    expect(session.bridge().extensions).toContain("mcp");
    const out = await run(session, [
      "import inspect, json",
      "from albedo import mcp as imported",
      "assert imported is mcp",
      "servers = await mcp.servers()",
      "print(json.dumps(sorted((s['name'], s['status']) for s in servers)))",
      "print(await mcp.everything.echo(message='hi'))",
      "print(await mcp.everything.echo('positional'))",
      "print(inspect.signature(mcp.everything.get_sum))",
      "print(mcp.everything.echo.__doc__.splitlines()[0])",
      "print(json.dumps(await mcp.call('everything.get-structured-content', {'location': 'Chicago'}), sort_keys=True))",
      "from albedo import McpImage",
      "parts = await mcp.everything.get_tiny_image()",
      "image = [part for part in parts if isinstance(part, McpImage)][0]",
      "print(type(image).__name__, image.mime, image.bytes[:4])",
      "print(sorted(t['name'] for t in await mcp.tools('raw'))[:3])",
      "print((await mcp.describe('raw.ok'))['input_schema']['required'])",
    ].join("\n"));
    const lines = out.split("\n");
    expect(lines.slice(0, 6)).toEqual([
      '[["everything", "running"], ["raw", "running"]]',
      "Echo: hi",
      "Echo: positional",
      "(a: float, b: float)",
      "Echoes back the input string",
      '{"conditions": "Light rain / drizzle", "humidity": 82, "temperature": 36}',
    ]);
    expect(lines[6]).toBe("McpImage image/png b'\\x89PNG'");
    expect(lines.slice(7)).toEqual(["['raw.bad_schema', 'raw.big', 'raw.change']", "['text']", ""]);
  });

  it("shows a tool's image as an image: the cell's result carries image/png", async () => {
    const { session } = await sessions.open(twoServers);
    const future = session.kernel.execute("from albedo import McpImage\n[part for part in await mcp.everything.get_tiny_image() if isinstance(part, McpImage)][0]");
    const bundles: Record<string, string>[] = [];
    future.onOutput((output) => output.header.msg_type === "execute_result" && bundles.push((output.content as { data: Record<string, string> }).data));
    expect((await future.done).status).toBe("ok");
    expect(bundles).toEqual([{ "image/png": expect.stringMatching(/^iVBORw0KGgo/), "text/plain": expect.stringMatching(/^<McpImage image\/png, \d+ bytes>$/) }]);
  });

  it("answers without await where no event loop runs, as a plain script calls it", async () => {
    const { session } = await sessions.open(twoServers);
    const out = await run(session, [
      "import threading",
      "answers = []",
      "def script():",
      "    answers.append(mcp.everything.echo(message='sync'))",
      "    answers.append(len(mcp.servers()))",
      "    answers.append(mcp.call('raw.ok', {'text': 'by name'}))",
      "worker = threading.Thread(target=script)",
      "worker.start(); worker.join()",
      "print(answers)",
    ].join("\n"));
    expect(out).toBe("['Echo: sync', 2, 'ok by name']\n");
  });

  it("raises the errors of M-5: wrong arguments name the field, a failing tool raises McpToolError, an unknown one NotFound", async () => {
    const { session } = await sessions.open(twoServers);
    const out = await run(session, [
      "from albedo import InvalidParams, McpToolError, NotFound",
      "for attempt in (lambda: mcp.everything.echo(message=5), lambda: mcp.call('raw.fail'), lambda: mcp.call('raw.nothing'), lambda: mcp.everything.nothing):",
      "    try:",
      "        value = attempt()",
      "        await value if hasattr(value, '__await__') else value",
      "    except (InvalidParams, McpToolError, NotFound, AttributeError) as error:",
      "        print(type(error).__name__, '|', str(error).splitlines()[0])",
    ].join("\n"));
    const lines = out.trim().split("\n");
    expect(lines[0]).toMatch(/^InvalidParams \| .*\/message: must be string/);
    expect(lines[1]).toBe("McpToolError | [mcp_tool_error] raw.fail failed: it went wrong");
    expect(lines[2]).toMatch(/^NotFound \| /);
    expect(lines[3]).toMatch(/^McpNameError \| mcp\.everything has no tool method 'nothing'/);
  });

  it("an unknown tool, server or argument shows the cell and the error, with none of albedo's source", async () => {
    const { session } = await sessions.open(twoServers);
    for (const [code, error] of [
      ["await mcp.everything.nothing()", /^McpNameError: mcp\.everything has no tool method 'nothing'/m],
      ["await mcp.nowhere.x()", /^McpNameError: no MCP server object mcp\.nowhere/m],
      ["await mcp.everything.echo(msg='x')", /^McpArgumentError: mcp\.everything\.echo\(message: str\): missing a required argument: 'message'/m],
      ["await mcp.call('everything.nothing', {})", /^NotFound: \[not_found\]/m],
    ] as const) {
      const failed = await failure(session, code);
      expect(failed.traceback, code).toMatch(error);
      expect(failed.traceback, code).toContain(code);
      expect(failed.traceback, code).not.toMatch(/_mcp\.py|_transport\.py|inspect\.py|skipping hidden/);
    }
  });

  it("shows a long call's progress notifications as lines on the cell's stderr while it runs", async () => {
    const { session } = await sessions.open(twoServers);
    const future = session.kernel.execute("r = await mcp.everything.trigger_long_running_operation(duration=3, steps=2)\nprint(r)");
    const seen: { name: string; text: string }[] = [];
    future.onOutput((output) => output.header.msg_type === "stream" && seen.push(output.content as { name: string; text: string }));
    expect((await future.done).status).toBe("ok");
    expect(seen[0]).toEqual({ name: "stderr", text: "mcp everything.trigger-long-running-operation: 1/2\n" });
    expect(seen.at(-1)).toEqual({ name: "stdout", text: expect.stringMatching(/^Long running operation completed/) });
  });

  it("cancels the call on the server when the cell is interrupted, and the session goes on", async () => {
    const { session, dirs } = await sessions.open(twoServers);
    const future = session.kernel.execute("await mcp.raw.hang()");
    const record = join(dirs.root, "record.txt");
    await poll(() => readFileSync(record, { encoding: "utf8", flag: "a+" }).includes("call "), { what: "the server to get the call" });
    await session.kernel.interrupt();
    const reply = await future.done;
    // An interrupted await of an albedo call ends the cell as an interrupt does a synchronous one.
    expect(reply).toMatchObject({ status: "error", ename: "KeyboardInterrupt" });
    expect((reply as { traceback?: string[] }).traceback?.join("\n")).not.toMatch(/_mcp\.py|_transport\.py|CancelledError/);
    await poll(() => readFileSync(record, "utf8").includes("cancelled "), { what: "notifications/cancelled to reach the server" });
    expect(await run(session, "print(await mcp.raw.ok('still'))")).toBe("ok still\n");
  });

  it("keeps the host's secret out of the kernel: not in its environment nor any /proc entry it can read", async () => {
    const { session } = await sessions.open(twoServers);
    const out = await run(session, [
      "import os, glob",
      `secret = ${JSON.stringify(HOST_SECRET)}.encode()`,
      "def holds(path):",
      "    try:",
      "        return secret in open(path, 'rb').read()",
      "    except OSError:",
      "        return False",
      "found = [p for p in glob.glob('/proc/*/environ') + glob.glob('/proc/*/cmdline') if holds(p)]",
      "print(found, 'MCP_TEST_SECRET' in os.environ)",
    ].join("\n"));
    expect(out).toBe("[] False\n");
  });
});

// The server runs on the Jupyter test venv's Python, which has the mcp package.
describe.skipIf(!HAVE_TEST_VENV)("M-3 M-5 a server written with the official Python SDK", () => {
  it("is called by a typed method whose signature comes from its schema, and a cancelled call reaches it", async () => {
    const record = (dirs: SessionDirs) => join(dirs.root, "sdk-record.txt");
    const { session, dirs } = await sessions.open((d) => configure(d, { sdk: { command: TEST_VENV_PYTHON, args: [resolve("test/mcp/servers/sdk_server.py")], env: { RECORD: record(d) } } }));
    const out = await run(session, [
      "import inspect",
      "print(inspect.signature(mcp.sdk.shout))",
      "print(await mcp.sdk.shout('hi', times=2))",
    ].join("\n"));
    // The SDK gives a str-returning tool an output schema: its structured content is the value.
    expect(out).toBe("(text: str, *, times: int = 1)\n{'result': 'HI HI'}\n");
    const future = session.kernel.execute("await mcp.sdk.nap(100)");
    await poll(() => readFileSync(record(dirs), { encoding: "utf8", flag: "a+" }).includes("napping"), { what: "the SDK server to start the nap" });
    await session.kernel.interrupt();
    expect(await future.done).toMatchObject({ status: "error", ename: "KeyboardInterrupt" });
    await poll(() => readFileSync(record(dirs), { encoding: "utf8", flag: "a+" }).includes("cancelled"), { what: "the SDK server to record the cancellation" });
  });
});

describe("M-4 K-8 no server configured", () => {
  it("has no mcp namespace and no mcp extension (absent, not empty)", async () => {
    const { session } = await sessions.open();
    expect(session.bridge().extensions).not.toContain("mcp");
    expect(await run(session, "print('mcp' in dir())")).toBe("False\n");
    const imported = await run(session, "try:\n    from albedo import mcp\nexcept ImportError as error:\n    print(error)");
    expect(imported).toContain("this session has no MCP servers, so there is no `mcp` namespace");
  });
});

describe("M-2 M-1 reload and a kernel that tries to configure a server", () => {
  it("restarts only the entry that changed; files the kernel writes configure nothing", async () => {
    const { session, dirs } = await sessions.open((d) => configure(d, { a: raw("normal"), b: raw("normal") }));
    const pids = async () => (await run(session, "print(await mcp.a.pid(), await mcp.b.pid())")).trim().split(" ");
    const [a1, b1] = await pids();
    configure(dirs, { a: raw("normal"), b: raw("normal", { env: { CHANGED: "1" } }) });
    await session.reload();
    const [a2, b2] = await pids();
    expect(a2).toBe(a1);
    expect(b2).not.toBe(b1);

    const out = await run(session, [
      "import json, os, pathlib",
      "entry = {'command': 'python3', 'args': ['-c', 'print(1)']}",
      "pathlib.Path('.mcp.json').write_text(json.dumps({'mcpServers': {'planted': entry}}))",
      "try:",
      "    os.makedirs('.albedo', exist_ok=True)",
      "    pathlib.Path('.albedo/settings.json').write_text(json.dumps({'mcp': {'servers': {'planted': entry}}}))",
      "    print('wrote')",
      "except OSError as error:",
      "    print(type(error).__name__)",
    ].join("\n"));
    expect(out.trim()).toMatch(/^(PermissionError|OSError)$/);
    // The state dir (global settings, approvals) is not the kernel's to write either: inside the
    // sandbox it is a private scratch tmpfs, so what the kernel writes there never reaches the host's.
    const hostSettings = readFileSync(join(dirs.stateDir, "settings.json"), "utf8");
    await run(session, [
      "import json, pathlib",
      `for name in ('settings.json', 'mcp-approvals.json'):`,
      `    path = pathlib.Path(${JSON.stringify(dirs.stateDir)}) / name`,
      "    try:",
      "        path.write_text(json.dumps({'mcp': {'servers': {'planted': entry}}}))",
      "        print(name, 'written')",
      "    except OSError as error:",
      "        print(name, type(error).__name__)",
    ].join("\n"));
    expect(readFileSync(join(dirs.stateDir, "settings.json"), "utf8")).toBe(hostSettings);
    expect(existsSync(join(dirs.stateDir, "mcp-approvals.json"))).toBe(false);
    await session.reload();
    expect(session.mcp.servers().map((server) => server.name)).toEqual(["a", "b"]);
  });
});


describe("M-2 M-3 K-7 a reload that brings MCP servers", () => {
  const attribute = (name: string) =>
    `try:\n    mcp.${name}\nexcept AttributeError as error:\n    print(error)`;

  it("a session opened with none gets them, their routes and an `mcp` namespace in its running kernel, without typed methods; the line names the change", async () => {
    const { session, dirs } = await sessions.open();
    await run(session, "kept = 41");
    expect(await run(session, "print('mcp' in dir())")).toBe("False\n");
    configure(dirs, { everything: { command: EVERYTHING } });
    const result = await session.reload();
    expect(result.mcp).toEqual({ added: ["everything"], removed: [], restarted: [], started: [], stopped: [] });
    expect(reloadText(result)).toMatch(/^reloaded: \+1 MCP server \(everything\), \d+ skills\n$/);
    expect(session.bridge().extensions).toContain("mcp");
    expect(session.methods()).toContain("mcp.call");
    const out = await run(session, [
      "print(kept + 1)",
      "print(await mcp.call('everything.echo', {'message': 'hi'}))",
      "print([s['name'] for s in await mcp.servers()])",
      "from albedo import mcp as imported",
      "print(imported is mcp)",
      attribute("everything"),
    ].join("\n"));
    const lines = out.split("\n");
    expect(lines.slice(0, 4)).toEqual(["42", "Echo: hi", "['everything']", "True"]);
    expect(lines[4]).toBe(
      "mcp.everything: the server everything came with a `/reload session` after this kernel started, and typed methods are made only when a kernel starts; " +
        "call its tools with `await mcp.call('everything.TOOL', {...})` (`await mcp.tools('everything')` lists them)",
    );
  });

  it("a server added beside others is reached by mcp.call; its attribute says why there is no typed method; removed and restarted entries are named", async () => {
    const { session, dirs } = await sessions.open((d) => configure(d, { a: raw("normal"), b: raw("normal") }));
    configure(dirs, { a: raw("normal", { env: { CHANGED: "1" } }), c: raw("normal") });
    const result = await session.reload();
    expect(result.mcp).toEqual({ added: ["c"], removed: ["b"], restarted: ["a"], started: [], stopped: [] });
    expect(reloadText(result, 200)).toMatch(/^reloaded: \+1 MCP server \(c\), -1 MCP server \(b\), restarted 1 MCP server \(a\), \d+ skills\n$/);
    const out = await run(session, ["print(await mcp.call('c.ok', {'text': 'new'}))", "print(await mcp.a.ok('typed'))", attribute("c"), "print(repr(mcp))"].join("\n"));
    const lines = out.split("\n");
    expect(lines.slice(0, 2)).toEqual(["ok new", "ok typed"]);
    expect(lines[2]).toContain("mcp.c: the server c came with a `/reload session` after this kernel started");
    expect(lines[3]).toContain("added by a reload, reached with call(): c");
    // Nothing changed: the line says so.
    expect(reloadText(await session.reload())).toMatch(/^reloaded: no change, \d+ skills\n$/);
  });

  it("a kernel restarted after such a reload starts with the namespace, typed methods and without the new server's secret", async () => {
    const { session, dirs } = await sessions.open();
    configure(dirs, { everything: { command: EVERYTHING }, raw: raw("normal", { env: { SECRET: { from_env: "MCP_TEST_SECRET" } } }) });
    await session.reload();
    await session.kernel.restart("test");
    expect(await run(session, "import os\nprint(await mcp.everything.echo(message='typed'), 'MCP_TEST_SECRET' in os.environ)")).toBe("Echo: typed False\n");
  });
});
