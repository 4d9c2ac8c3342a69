/**
 * What a person sees of the network as it happens (N-4), a session that opens with its own policy
 * (N-1), and two bypasses tried from inside a real sandboxed kernel (N-2): a real daemon over HTTP
 * and its stream, `albedo console` attached to it, `albedo exec` embedded, bubblewrap kernels and
 * test servers on 127.0.0.2 and 127.0.0.3.
 */
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DENIAL_REPEAT_WINDOW_MS, MAX_DENIAL_HOSTS_PER_WINDOW } from "../../src/network/limits.js";
import { call, envFor, openStream, type DaemonProcess } from "../daemon/support/daemon.js";
import { daemonFixture } from "../daemon/support/fixture.js";
import { runAlbedo } from "../support/cli.js";
import { poll } from "../support/poll.js";
import { echoHandler, startServer, type TestServer } from "./support.js";

const fixture = daemonFixture();
const TEST_TIMEOUT_MS = 180_000;
let allowed: TestServer;
let refused: TestServer;
/** Requests each server received, by URL. */
const seen = { allowed: [] as string[], refused: [] as string[] };

beforeAll(async () => {
  allowed = await startServer("127.0.0.2", (req, res) => (seen.allowed.push(req.url ?? ""), echoHandler(req, res)));
  refused = await startServer("127.0.0.3", (req, res) => (seen.refused.push(req.url ?? ""), echoHandler(req, res)));
});
afterAll(async () => {
  await Promise.all([allowed?.close(), refused?.close()]);
});

/** Python fetching each URL through the proxy variables, printing the status of each. */
const fetchCode = (...urls: string[]) => `
import urllib.request, urllib.error
for url in ${JSON.stringify(urls)}:
    try:
        with urllib.request.urlopen(url, timeout=20) as r:
            print(r.status)
    except urllib.error.HTTPError as e:
        print(e.code)
`;

function stdoutOf(answer: { body: { outputs: { msg_type: string; content: { name?: string; text?: string } }[] } }): string {
  return answer.body.outputs.filter((o) => o.msg_type === "stream").map((o) => o.content.text ?? "").join("");
}

async function openWith(daemon: DaemonProcess, workspace: string, network?: unknown): Promise<{ status: number; body: Record<string, any> }> {
  return call(daemon, "POST", "/sessions", { workspace, ...(network === undefined ? {} : { network }) });
}

describe("N-1 N-4 a session opens with its own network policy, and each denial reaches the stream as it happens", () => {
  it("POST /sessions takes network (checked as the setting is); the stream says each denial on one line and counts its repeats", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = fixture.dirs;
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    // Refused: true while the global setting is not, and a pattern the setting refuses.
    const open = await openWith(daemon, dirs.workspace, true);
    expect(open.status).toBe(400);
    expect(JSON.stringify(open.body)).toContain("network: true (the host's whole network, unfiltered) may be asked for only while the global network setting is true");
    const bad = await openWith(daemon, dirs.workspace, { allow: ["http://x/"] });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("network.allow");
    expect((await call(daemon, "GET", "/sessions")).body.sessions).toHaveLength(0);

    const target = `127.0.0.2:${allowed.port}`;
    const opened = await openWith(daemon, dirs.workspace, { allow: [target] });
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    expect(opened.body.network).toMatchObject({ mode: "policy", hosts: 1, from: "session", setting: { allow: [target] } });
    const id = opened.body.id as string;
    const stream = await openStream(daemon, id);
    try {
      const denied = `http://127.0.0.3:${refused.port}/no`;
      const ran = await call(daemon, "POST", `/sessions/${id}/execute`, { code: fetchCode(`http://${target}/yes`, denied, denied, denied) });
      expect(stdoutOf(ran)).toBe("200\n403\n403\n403\n");
      expect(seen.refused).toEqual([]);
      const lines = () => stream.events.filter((event) => event.type === "network");
      await poll(async () => lines().length >= 2, { what: "the repeats' line", timeoutMs: DENIAL_REPEAT_WINDOW_MS * 5 });
      const host = `127.0.0.3:${refused.port}`;
      expect(lines()).toEqual([
        { type: "network", session_id: id, host: "127.0.0.3", port: refused.port, reason: "not in network.allow", hint: `allow it: albedo network allow ${host}`, count: 1, text: `network: blocked ${host} (not in network.allow) — allow it: albedo network allow ${host}` },
        { type: "network", session_id: id, host: "127.0.0.3", port: refused.port, reason: "not in network.allow", hint: `allow it: albedo network allow ${host}`, count: 2, text: `network: blocked ${host} 2 more times (not in network.allow)` },
      ]);
      // The allowed request drew no line; reset goes back to the policy the session opened with.
      const reset = await call(daemon, "PATCH", `/sessions/${id}/network`, { reset: true });
      expect(reset.body.network).toMatchObject({ hosts: 1, from: "session" });
    } finally {
      await stream.close();
    }
  });

  it("albedo console attached to the daemon prints the denial line as the cell runs", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = fixture.dirs;
    writeFileSync(join(dirs.state, "settings.json"), JSON.stringify({ network: { allow: [`127.0.0.2:${allowed.port}`] } }));
    await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const code = `import urllib.request, urllib.error\ntry:\n    urllib.request.urlopen("http://127.0.0.3:${refused.port}/console", timeout=20)\nexcept urllib.error.HTTPError as e:\n    print("status", e.code)\n\n`;
    const ran = await runAlbedo(["console"], { cwd: dirs.workspace, env: envFor(dirs), stdin: code });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain("(daemon http://127.0.0.1:");
    expect(ran.stdout).toContain("status 403");
    const host = `127.0.0.3:${refused.port}`;
    expect(ran.stderr).toContain(`network: blocked ${host} (not in network.allow) — allow it: albedo network allow ${host}\n`);

    // --network: the attached console's session opens with its own policy (POST /sessions network).
    const own = await runAlbedo(["console", "--network", host], { cwd: dirs.workspace, env: envFor(dirs), stdin: `import urllib.request\nprint("status", urllib.request.urlopen("http://${host}/own", timeout=20).status)\n\n` });
    expect(own.code, own.stderr).toBe(0);
    expect(own.stdout).toContain(`network: a policy of 1 host`);
    expect(own.stdout).toContain("status 200");
    expect(seen.refused).toEqual(["/own"]);
    seen.refused.length = 0;
  });
});

describe("N-4 albedo exec says each denial on stderr as it happens, and the repeats' count when the cell ends", () => {
  it("one line for the first refusal of a host, one with the count of its repeats", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = fixture.dirs;
    writeFileSync(join(dirs.state, "settings.json"), JSON.stringify({ network: { allow: [`127.0.0.2:${allowed.port}`] } }));
    const url = `http://127.0.0.3:${refused.port}/exec`;
    const ran = await runAlbedo(["exec", "-c", fetchCode(url, url, url, url, `http://127.0.0.2:${allowed.port}/ok`)], { cwd: dirs.workspace, env: envFor(dirs) });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe("403\n403\n403\n403\n200\n");
    const host = `127.0.0.3:${refused.port}`;
    const lines = ran.stderr.split("\n").filter((line) => line.startsWith("network:"));
    expect(lines).toEqual([`network: blocked ${host} (not in network.allow) — allow it: albedo network allow ${host}`, `network: blocked ${host} 3 more times (not in network.allow)`]);

    // Past MAX_DENIAL_HOSTS_PER_WINDOW hosts in one window, the others are summed into one line.
    const extra = 4;
    const many = Array.from({ length: MAX_DENIAL_HOSTS_PER_WINDOW + extra }, (_, index) => `http://127.0.2.${index + 1}:9/`);
    const flood = await runAlbedo(["exec", "-c", fetchCode(...many)], { cwd: dirs.workspace, env: envFor(dirs) });
    expect(flood.code, flood.stderr).toBe(0);
    const said = flood.stderr.split("\n").filter((line) => line.startsWith("network:"));
    expect(said).toHaveLength(MAX_DENIAL_HOSTS_PER_WINDOW + 1);
    expect(said[0]).toBe("network: blocked 127.0.2.1:9 (not in network.allow) — allow it: albedo network allow 127.0.2.1:9");
    expect(said.at(-1)).toBe(`network: blocked ${extra} more connections to ${extra} other hosts — albedo network show lists them`);
  });

  it("--network gives the run its own policy, checked as the setting is; on only while the global setting is true", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = fixture.dirs;
    writeFileSync(join(dirs.state, "settings.json"), JSON.stringify({ network: { allow: [`127.0.0.2:${allowed.port}`] } }));
    const exec = (...args: string[]) => runAlbedo(["exec", ...args], { cwd: dirs.workspace, env: envFor(dirs) });
    const code = fetchCode(`http://127.0.0.3:${refused.port}/flag`, `http://127.0.0.2:${allowed.port}/flag`);
    const own = await exec("--network", `127.0.0.3:${refused.port}`, "-c", code);
    expect(own.code, own.stderr).toBe(0);
    expect(own.stdout).toBe("200\n403\n");
    expect(seen.refused).toEqual(["/flag"]);
    seen.refused.length = 0;
    const json = await exec("--network", JSON.stringify({ deny: ["127.0.0.3"] }), "-c", code);
    expect(json.stdout).toBe("403\n403\n");
    const bad = await exec("--network", "http://x/", "-c", "1");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--network: allow[0]");
    const open = await exec("--network", "on", "-c", "1");
    expect(open.code).toBe(1);
    expect(open.stderr).toContain("network: true (the host's whole network, unfiltered) may be asked for only while the global network setting is true");
  });
});

describe("N-2 bypasses from inside a sandboxed kernel: UDP, and a Host header that disagrees with the target", () => {
  let udp: UdpSocket;
  const datagrams: string[] = [];
  beforeAll(async () => {
    udp = createSocket("udp4");
    udp.on("message", (message) => datagrams.push(message.toString()));
    udp.bind(0, "127.0.0.2");
    await once(udp, "listening");
  });
  afterAll(() => new Promise<void>((resolve) => (udp ? udp.close(() => resolve()) : resolve())));

  it("a UDP datagram from the kernel to a host-side server never arrives, whatever the policy allows", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = fixture.dirs;
    const port = (udp.address() as AddressInfo).port;
    // Even the exact host and port allowed: the proxy speaks TCP only, and the namespace has loopback only.
    writeFileSync(join(dirs.state, "settings.json"), JSON.stringify({ network: { allow: [`127.0.0.2:${port}`, `127.0.0.2:${allowed.port}`] } }));
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const opened = await openWith(daemon, dirs.workspace);
    const id = opened.body.id as string;
    const code = `
import socket
results = []
for family, address in ((socket.AF_INET, ("127.0.0.2", ${port})), (socket.AF_INET6, ("::ffff:127.0.0.2", ${port}))):
    s = socket.socket(family, socket.SOCK_DGRAM)
    try:
        s.sendto(b"from-the-kernel", address)
        results.append("sent")
    except OSError as e:
        results.append(type(e).__name__)
    finally:
        s.close()
print(results)
import urllib.request
print(urllib.request.urlopen("http://127.0.0.2:${allowed.port}/after-udp", timeout=20).status)
`;
    const ran = await call(daemon, "POST", `/sessions/${id}/execute`, { code });
    expect(ran.body.status, JSON.stringify(ran.body.outputs)).toBe("ok");
    // The allowed request after the datagrams went through the proxy: by then a delivered datagram would be here.
    expect(stdoutOf(ran)).toMatch(/\n200\n$/);
    expect(seen.allowed).toContain("/after-udp");
    // The server itself works: a datagram from the host arrives.
    const probe = createSocket("udp4");
    probe.send("from-the-host", port, "127.0.0.2");
    await poll(async () => datagrams.includes("from-the-host"), { what: "the host's datagram" });
    probe.close();
    expect(datagrams).toEqual(["from-the-host"]);
  });

  it("refuses a request whose Host header names another host than its target, plain or CONNECT, in either direction", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dirs = fixture.dirs;
    writeFileSync(join(dirs.state, "settings.json"), JSON.stringify({ network: { allow: [`127.0.0.2:${allowed.port}`] } }));
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const id = (await openWith(daemon, dirs.workspace)).body.id as string;
    const good = `127.0.0.2:${allowed.port}`;
    const bad = `127.0.0.3:${refused.port}`;
    // Raw requests to the relay (the proxy variables' address), as a client that forges Host would send them.
    const code = `
import os, socket, json
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
def ask(head):
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    s.sendall(head.encode())
    data = b""
    while b"\\r\\n\\r\\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    return data.split(b"\\r\\n", 1)[0].decode()
print(json.dumps([
    ask("GET http://${good}/plain-forged HTTP/1.1\\r\\nHost: ${bad}\\r\\n\\r\\n"),
    ask("GET http://${bad}/plain-denied HTTP/1.1\\r\\nHost: ${good}\\r\\n\\r\\n"),
    ask("CONNECT ${good} HTTP/1.1\\r\\nHost: ${bad}\\r\\n\\r\\n"),
    ask("CONNECT ${bad} HTTP/1.1\\r\\nHost: ${good}\\r\\n\\r\\n"),
    ask("GET http://${good}/plain-agreed HTTP/1.1\\r\\nHost: ${good}\\r\\n\\r\\n"),
]))
`;
    const ran = await call(daemon, "POST", `/sessions/${id}/execute`, { code });
    expect(ran.body.status, JSON.stringify(ran.body.outputs)).toBe("ok");
    const [forged, deniedTarget, connectForged, connectDenied, agreed] = JSON.parse(stdoutOf(ran)) as string[];
    expect(forged).toMatch(/^HTTP\/1\.1 400 albedo: the Host header/);
    // Decided by the target, never by the Host header: a denied target with an allowed Host is refused.
    expect(deniedTarget).toMatch(/^HTTP\/1\.1 (400|403) /);
    expect(connectForged).toMatch(/^HTTP\/1\.1 400 albedo: the Host header/);
    expect(connectDenied).toMatch(/^HTTP\/1\.1 (400|403) /);
    expect(agreed).toMatch(/^HTTP\/1\.1 200 /);
    expect(seen.allowed).toContain("/plain-agreed");
    expect(seen.allowed).not.toContain("/plain-forged");
    expect(seen.refused).toEqual([]);
    const records = (await call(daemon, "GET", `/sessions/${id}/network`)).body.records as { host: string; decision: string }[];
    expect(records.filter((record) => record.decision === "allowed").map((record) => record.host)).toEqual(["127.0.0.2"]);
  });
});
