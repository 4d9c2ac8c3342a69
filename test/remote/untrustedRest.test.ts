import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_REMOTE_BODY_BYTES, MAX_REMOTE_QUOTE_CHARS } from "../../src/kernel/remote/limits.js";
import { call, killDaemon, makeDirs, startDaemon, type DaemonProcess, type Dirs } from "../daemon/support/daemon.js";
import { poll } from "../support/poll.js";
import { hostileServer, streamBody, type HostileServer } from "./hostileServer.js";

/** What the hostile server offers to send: far past the bound, and past what the daemon could hold without notice. */
const STREAMED_BYTES = 512 * 1024 * 1024;
/** How much the daemon's peak memory may grow while the server streams: a bound on memory, not on time. */
const MAX_GROWTH_BYTES = 100 * 1024 * 1024;
/** The server must stop well short of what it offered: the daemon aborted the answer. */
const MAX_SENT_BYTES = 64 * 1024 * 1024;
/** From SIGTERM to the daemon gone. */
const DAEMON_EXIT_MS = 20_000;
const KERNELS_PATH = /^\/api\/kernels$/;

/** The daemon's resident and peak resident memory, in bytes, from /proc. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1]) * 1024;
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

describe("K-12 B D-1 a remote server's REST answers are bounded, and its words quoted without the token (real daemon, hostile server)", () => {
  /** The token the daemon sends; the server echoes it back. */
  const token = `jt-${randomBytes(16).toString("hex")}`;
  let dirs: Dirs;
  let hostile: HostileServer;
  let daemon: DaemonProcess;
  let logFile: string;

  const open = () => call(daemon, "POST", "/sessions", { workspace: dirs.workspace, remote: { url: hostile.url } });
  const everythingShown = async (answers: readonly unknown[]) =>
    [JSON.stringify(answers), daemon.stdout(), daemon.stderr(), await readFile(logFile, "utf8").catch(() => "")].join("\n");

  beforeAll(async () => {
    dirs = await makeDirs();
    hostile = await hostileServer(undefined);
    logFile = join(dirs.root, "daemon.log");
    daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0", "--log-file", logFile], { JUPYTER_TOKEN: token });
  });

  afterAll(async () => {
    if (daemon) {
      daemon.process.kill("SIGTERM");
      await Promise.race([daemon.exited, new Promise((wait) => setTimeout(wait, DAEMON_EXIT_MS))]);
      await killDaemon(daemon);
    }
    await hostile?.close();
    await dirs?.cleanup();
  });

  it("a token echoed in the error's body, traceback, status text and headers is in no API answer and no log line; the quote is bounded", async () => {
    hostile.answer("POST", KERNELS_PATH, (req, res) => {
      const echo = String(req.headers.authorization);
      res.writeHead(500, `denied for ${echo}`, { "content-type": "application/json", "x-echo": echo });
      res.end(JSON.stringify({ message: `denied for ${echo}: ${"and more ".repeat(1_000)}`, traceback: `Traceback (most recent call last):\n  request carried ${echo}` }));
    });
    const quoted = await open();
    expect(quoted).toMatchObject({ status: 503, body: { code: "kernel_unavailable" } });
    expect(quoted.body.detail).toMatch(/answered HTTP 500: denied for token \[redacted\]: and more/);
    expect(quoted.body.detail.length).toBeLessThan(MAX_REMOTE_QUOTE_CHARS + 200);

    // A body that is not JSON: services words the error from the status text.
    hostile.answer("POST", KERNELS_PATH, (req, res) => {
      const echo = String(req.headers.authorization);
      res.writeHead(502, `denied for ${echo}`, { "content-type": "text/html", "x-echo": echo }).end(`<p>${echo}</p>`);
    });
    const fallback = await open();
    expect(fallback.body.detail).toMatch(/answered HTTP 502: Invalid response: 502 denied for token \[redacted\]/);
    const shown = await everythingShown([quoted, fallback]);
    expect(shown).not.toContain(token);
    // The log does carry the failure, quoted: the check above read the lines that would have leaked.
    expect(await readFile(logFile, "utf8")).toContain("answered HTTP 500: denied for token [redacted]");
  });

  it("a server that refuses the kernel's WebSocket fails the open at once with 503 naming the refusal, and its kernel is shut down there", async () => {
    let upgrades = 0;
    let deleted = false;
    hostile.answer("POST", KERNELS_PATH, (_req, res) => void res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ id: "k-refused", name: "python3" })));
    hostile.answer("DELETE", /^\/api\/kernels\/k-refused$/, (_req, res) => void ((deleted = true), res.writeHead(204).end()));
    hostile.onUpgrade((_req, socket) => {
      upgrades += 1;
      socket.end("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    });
    try {
      const refused = await open();
      expect(refused).toMatchObject({ status: 503, body: { code: "kernel_unavailable" } });
      expect(refused.body.detail).toContain("the server refused the kernel's WebSocket (Unexpected server response: 403)");
      expect(upgrades).toBe(1);
      await poll(() => deleted, { what: "the kernel to be shut down on the server" });
    } finally {
      hostile.onUpgrade(undefined);
    }
  });

  it("a kernel start answered with an endless body is cut at MAX_REMOTE_BODY_BYTES: the daemon's memory does not follow it, /health answers meanwhile", async () => {
    let reached!: () => void;
    let release!: () => void;
    const atHold = new Promise<void>((done) => (reached = done));
    const until = new Promise<void>((done) => (release = done));
    let sent: Promise<number> | undefined;
    hostile.answer("POST", KERNELS_PATH, (_req, res) => {
      res.writeHead(201, { "content-type": "application/json" });
      sent = streamBody(res, '{"id": "', STREAMED_BYTES, { atBytes: MAX_REMOTE_BODY_BYTES / 4, reached, until });
    });
    const before = memoryOf(daemon.process.pid!);
    const opening = open();
    await atHold;
    expect((await call(daemon, "GET", "/health")).status).toBe(200);
    release();

    const refused = await opening;
    const after = memoryOf(daemon.process.pid!);
    expect(after.peak - before.peak).toBeLessThan(MAX_GROWTH_BYTES);
    expect(after.rss - before.rss).toBeLessThan(MAX_GROWTH_BYTES);
    expect(await sent).toBeLessThan(MAX_SENT_BYTES);
    expect(refused).toMatchObject({ status: 503, body: { code: "kernel_unavailable" } });
    expect(refused.body.detail).toMatch(/POST http:\/\/127\.0\.0\.1:\d+\/api\/kernels: the answer is larger than MAX_REMOTE_BODY_BYTES \(4\.0 MB\); albedo stopped reading it/);
    expect((await call(daemon, "GET", "/health")).status).toBe(200);
  });
});
