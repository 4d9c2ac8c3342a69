/**
 * The network policy end to end (N-1, N-2, N-4): a real daemon over HTTP, real sandboxed kernels
 * (bubblewrap) whose own network namespace has loopback only, the session's egress proxy on a Unix
 * socket in its run dir, the kernel package's relay at 127.0.0.1:PORT, and test servers on other
 * loopback addresses (127.0.0.2, 127.0.0.3: not NO_PROXY), which the policy must name exactly
 * (host and port) since they are internal addresses.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import type { RequestListener } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, envFor, type DaemonProcess } from "../daemon/support/daemon.js";
import { runAlbedo, runProgram } from "../support/cli.js";
import { poll } from "../support/poll.js";
import { managedVenvDir, venvPython } from "../../src/python/index.js";
import { daemonFixture } from "../daemon/support/fixture.js";
import { echoHandler, startServer, type TestServer } from "./support.js";

const fixture = daemonFixture();
const TEST_TIMEOUT_MS = 180_000;
let first: TestServer;
let second: TestServer;

beforeAll(async () => {
  first = await startServer("127.0.0.2", echoHandler);
  second = await startServer("127.0.0.3", echoHandler);
});
afterAll(async () => {
  await Promise.all([first?.close(), second?.close()]);
});

/** Python for the kernel: fetches each URL through the proxy variables, printing one JSON line per URL. */
const fetchCode = (...urls: string[]) => `
import json, os, urllib.request, urllib.error
for url in ${JSON.stringify(urls)}:
    try:
        with urllib.request.urlopen(url, timeout=20) as r:
            print(json.dumps({"status": r.status, "body": r.read().decode()}))
    except urllib.error.HTTPError as e:
        print(json.dumps({"status": e.code, "reason": e.reason, "body": e.read().decode()}))
    except Exception as e:
        print(json.dumps({"error": repr(e)}))
`;

/** The JSON lines a cell printed. */
function printed(answer: { body: { outputs: { msg_type: string; content: { name?: string; text?: string } }[] } }): Record<string, unknown>[] {
  const text = answer.body.outputs.filter((o) => o.msg_type === "stream" && o.content.name === "stdout").map((o) => o.content.text ?? "").join("");
  return text.trim().split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

function writeGlobal(state: string, settings: unknown): void {
  writeFileSync(join(state, "settings.json"), JSON.stringify(settings));
}

async function openSession(daemon: DaemonProcess, workspace: string): Promise<{ id: string; body: Record<string, any> }> {
  const opened = await call(daemon, "POST", "/sessions", { workspace });
  expect(opened.status, JSON.stringify(opened.body)).toBe(201);
  return { id: opened.body.id as string, body: opened.body };
}

describe("N-1 N-2 N-4 a sandboxed kernel reaches what the policy allows, through its session's proxy, and a change applies to its next connection", () => {
  it("allowed host answers, another gets the 403 line; PATCH allows it for the same kernel; the records list both", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = fixture.dirs;
    writeGlobal(dirs.state, { network: { allow: [`127.0.0.2:${first.port}`] } });
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const { id, body } = await openSession(daemon, dirs.workspace);
    expect(body.kernel.sandbox).toBe("bwrap");
    expect(body.network).toMatchObject({ mode: "policy", hosts: 1, from: "global", text: "a policy of 1 host" });
    const pid = body.kernel.pid as number;

    const env = await call(daemon, "POST", `/sessions/${id}/execute`, {
      code: "import os, json, subprocess\nprint(json.dumps({k: os.environ.get(k) for k in ['HTTP_PROXY', 'https_proxy', 'NO_PROXY', 'ALBEDO_EGRESS_SOCKET']}))\nprint(json.dumps({'child': subprocess.run(['sh', '-c', 'echo $HTTPS_PROXY'], capture_output=True, text=True).stdout.strip()}))",
    });
    const [vars, child] = printed(env);
    expect(vars!.HTTP_PROXY).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(vars!.https_proxy).toBe(vars!.HTTP_PROXY);
    expect(vars!.NO_PROXY).toBe("localhost,127.0.0.1,::1");
    expect(String(vars!.ALBEDO_EGRESS_SOCKET)).toMatch(/egress\.sock$/);
    expect(child!.child).toBe(vars!.HTTP_PROXY);

    const firstUrl = `http://127.0.0.2:${first.port}/one`;
    const secondUrl = `http://127.0.0.3:${second.port}/two`;
    const before = printed(await call(daemon, "POST", `/sessions/${id}/execute`, { code: fetchCode(firstUrl, secondUrl) }));
    expect(before[0]).toMatchObject({ status: 200 });
    // The proxy forwards in origin form.
    expect(JSON.parse(String(before[0]!.body)).url).toBe("/one");
    const line = `albedo: 127.0.0.3:${second.port} is not allowed (not in network.allow); allow it: albedo network allow 127.0.0.3:${second.port}`;
    expect(before[1]).toMatchObject({ status: 403, body: `${line}\n` });

    // A socket that ignores the proxy reaches nothing: the namespace has loopback only.
    const raw = printed(await call(daemon, "POST", `/sessions/${id}/execute`, {
      code: `import socket, json\ntry:\n    socket.create_connection(("127.0.0.3", ${second.port}), timeout=5)\n    print(json.dumps({"raw": "connected"}))\nexcept OSError as e:\n    print(json.dumps({"raw": type(e).__name__}))`,
    }));
    expect(raw[0]!.raw).not.toBe("connected");

    const patched = await call(daemon, "PATCH", `/sessions/${id}/network`, { allow: [`127.0.0.3:${second.port}`] });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.network).toMatchObject({ mode: "policy", hosts: 2, from: "session" });
    const after = printed(await call(daemon, "POST", `/sessions/${id}/execute`, { code: fetchCode(secondUrl) }));
    expect(after[0]).toMatchObject({ status: 200 });
    const same = await call(daemon, "GET", `/sessions/${id}`);
    expect(same.body.kernel.pid).toBe(pid);
    expect(same.body.network.connections).toMatchObject({ allowed: 2, denied: 1 });

    const listed = await call(daemon, "GET", `/sessions/${id}/network?limit=2`);
    expect(listed.status).toBe(200);
    expect(listed.body.records).toHaveLength(2);
    expect(listed.body.records[0]).toMatchObject({ seq: 1, host: "127.0.0.2", port: first.port, method: "GET", path: "/one", decision: "allowed", rule: `network.allow 127.0.0.2:${first.port}` });
    expect(listed.body.records[1]).toMatchObject({ seq: 2, host: "127.0.0.3", decision: "denied" });
    const rest = await call(daemon, "GET", `/sessions/${id}/network?after=${listed.body.next_after}`);
    expect(rest.body.records).toEqual([expect.objectContaining({ seq: 3, host: "127.0.0.3", decision: "allowed" })]);
    expect(rest.body.next_after).toBeNull();

    // reset: back to the global policy, again for the next connection.
    const reset = await call(daemon, "PATCH", `/sessions/${id}/network`, { reset: true });
    expect(reset.body.network).toMatchObject({ hosts: 1, from: "global" });
    const again = printed(await call(daemon, "POST", `/sessions/${id}/execute`, { code: fetchCode(secondUrl) }));
    expect(again[0]).toMatchObject({ status: 403 });
    expect((await call(daemon, "PATCH", `/sessions/${id}/network`, { allow: ["https://pypi.org/simple"] })).status).toBe(400);

    // The same through the command line: allow for the running session, show its records.
    const cli = (...args: string[]) => runAlbedo(args, { cwd: dirs.workspace, env: envFor(dirs) });
    const allowed = await cli("network", "allow", `127.0.0.3:${second.port}`, "--session", id);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toContain(`session ${id}: network a policy of 2 hosts, from its next connection`);
    expect(printed(await call(daemon, "POST", `/sessions/${id}/execute`, { code: fetchCode(secondUrl) }))[0]).toMatchObject({ status: 200 });
    const shown = await cli("network", "show", "--session", id);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`  allow: 127.0.0.2:${first.port}, 127.0.0.3:${second.port}`);
    expect(shown.stdout).toContain("connections: 3 allowed, 2 denied, 0 failed");
    expect(shown.stdout).toMatch(new RegExp(`GET 127\\.0\\.0\\.3:${second.port}/two  denied: not in network\\.allow`));
    expect((await cli("network", "allow", "http://x", "--session", id)).code).toBe(2);
    // Without --session: the global setting, for new sessions.
    const global = await cli("network", "allow", "pypi.org");
    expect(global.code, global.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dirs.state, "settings.json"), "utf8")).network).toEqual({ allow: [`127.0.0.2:${first.port}`, "pypi.org"] });
    expect((await cli("network", "show")).stdout).toContain("network: a policy of 2 hosts (global");
    expect((await cli("network", "reset")).code).toBe(0);
    expect(JSON.parse(readFileSync(join(dirs.state, "settings.json"), "utf8")).network).toBe(false);
  });

  it("a project file that sets network changes nothing, and the session says so naming the file", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = fixture.dirs;
    mkdirSync(join(dirs.workspace, ".albedo"), { recursive: true });
    const projectFile = join(dirs.workspace, ".albedo", "settings.json");
    writeFileSync(projectFile, JSON.stringify({ network: true }));
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const { id, body } = await openSession(daemon, dirs.workspace);
    expect(body.network.mode).toBe("off");
    expect(body.network.diagnostics).toEqual([expect.stringContaining(`${projectFile} sets network, which is ignored`)]);
    const tried = printed(await call(daemon, "POST", `/sessions/${id}/execute`, { code: fetchCode(`http://127.0.0.2:${first.port}/x`) }));
    expect(tried[0]).toMatchObject({ status: 403, reason: `albedo: 127.0.0.2:${first.port} is not allowed (network is off); allow it: albedo network allow 127.0.0.2:${first.port}` });
    // The daemon refuses to write it there too.
    const current = await call(daemon, "GET", `/settings?workspace=${encodeURIComponent(dirs.workspace)}`);
    const refused = await call(daemon, "PATCH", "/settings", { scope: "project", workspace: dirs.workspace, network: { allow: ["pypi.org"] } }, { "if-match": `"${current.body.project.revision}"` });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("network is read from the global settings only");
  });
});

describe("N-2 K-11 a warm spare gets the same egress as a session's own kernel", () => {
  it("the spare taken by the second open reaches the allowed host through its own proxy", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = fixture.dirs;
    writeGlobal(dirs.state, { network: { allow: [`127.0.0.2:${first.port}`] } });
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "1"]);
    await openSession(daemon, dirs.workspace);
    await poll(async () => ((await call(daemon, "GET", "/health")).body.spares as { state: string }[]).some((spare) => spare.state === "ready"), { what: "a ready spare", timeoutMs: 120_000 });
    const { id, body } = await openSession(daemon, dirs.workspace);
    expect(body.kernel.warm).toBe(true);
    expect(body.network).toMatchObject({ mode: "policy", hosts: 1 });
    const got = printed(await call(daemon, "POST", `/sessions/${id}/execute`, { code: fetchCode(`http://127.0.0.2:${first.port}/warm`, `http://127.0.0.3:${second.port}/warm`) }));
    expect(got[0]).toMatchObject({ status: 200 });
    expect(got[1]).toMatchObject({ status: 403 });
    const listed = await call(daemon, "GET", `/sessions/${id}/network`);
    expect(listed.body.records.map((r: { decision: string; path: string }) => `${r.decision} ${r.path}`)).toEqual(["allowed /warm", "denied /warm"]);
  });
});

/** A PEP 503 index of one wheel, on plain HTTP. */
function indexHandler(wheel: { name: string; bytes: Buffer }): RequestListener {
  return (req, res) => {
    if (req.url === "/simple/albedo-probe/") {
      const sha = createHash("sha256").update(wheel.bytes).digest("hex");
      return void res.writeHead(200, { "content-type": "text/html" }).end(`<html><body><a href="/files/${wheel.name}#sha256=${sha}">${wheel.name}</a></body></html>`);
    }
    if (req.url === `/files/${wheel.name}`) return void res.writeHead(200, { "content-type": "application/octet-stream" }).end(wheel.bytes);
    res.writeHead(404).end("not here\n");
  };
}

/** Everything a cell wrote on stdout and stderr. */
function streamed(answer: { body: { outputs: { msg_type: string; content: { text?: string } }[] } }): string {
  return answer.body.outputs.filter((o) => o.msg_type === "stream").map((o) => o.content.text ?? "").join("");
}

describe("N-5 %pip install in a sandboxed kernel goes through the proxy to an allowed index", () => {
  it("installs a wheel from a local index the policy allows, and shows the denial line once it is denied", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = fixture.dirs;
    const wheelDir = join(dirs.root, "wheel");
    mkdirSync(wheelDir);
    const built = await runProgram(venvPython(managedVenvDir()), [fileURLToPath(new URL("./relay_client.py", import.meta.url)), "", "", "wheel", wheelDir], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
    expect(built.code, built.stderr).toBe(0);
    const name = String((JSON.parse(built.stdout.trim()) as { wheel: string }).wheel);
    const index = await startServer("127.0.0.2", indexHandler({ name, bytes: readFileSync(join(wheelDir, name)) }));
    try {
      const allowed = `127.0.0.2:${index.port}`;
      writeGlobal(dirs.state, { network: { allow: [allowed] } });
      const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
      const { id } = await openSession(daemon, dirs.workspace);
      const pip = (target: string, scheme = "http", retries = 0) =>
        `%pip install --index-url ${scheme}://${allowed}/simple/ --target ${target} --retries ${retries} --timeout 20 --no-cache-dir --disable-pip-version-check albedo-probe`;
      const installed = await call(daemon, "POST", `/sessions/${id}/execute`, { code: pip("pkgs") });
      expect(streamed(installed)).toContain("Successfully installed albedo-probe-1.0");
      const used = await call(daemon, "POST", `/sessions/${id}/execute`, { code: "import sys\nsys.path.insert(0, 'pkgs')\nimport albedo_probe\nprint(albedo_probe.VALUE)" });
      expect(streamed(used)).toBe("42\n");
      const records = await call(daemon, "GET", `/sessions/${id}/network`);
      expect(records.body.records.map((r: { path: string; decision: string }) => `${r.decision} ${r.path}`)).toEqual(["allowed /simple/albedo-probe/", `allowed /files/${name}`]);

      expect((await call(daemon, "PATCH", `/sessions/${id}/network`, { deny: [allowed] })).status).toBe(200);
      // pip shows a refused CONNECT's line (an index is HTTPS) in its warning before a retry (it retries
      // 5 times by default); a plain-HTTP 403 it only logs with -v.
      const refused = streamed(await call(daemon, "POST", `/sessions/${id}/execute`, { code: pip("again", "https", 1) }));
      expect(refused).toContain(`albedo: ${allowed} is not allowed (denied by network.deny ${allowed})`);
      expect(refused).not.toContain("Successfully installed");
    } finally {
      await index.close();
    }
  });
});

