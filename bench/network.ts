/**
 * The egress proxy's costs (N-6), with the parts a sandboxed kernel's traffic crosses: curl as the
 * kernel's tool, the kernel package's relay (Python) on 127.0.0.1, the proxy in a process of its
 * own (as in the daemon) on a Unix socket, and servers on 127.0.0.2 and up in this process.
 *
 * - `download_50mb`: a 50 MB HTTPS GET through relay and proxy (a CONNECT tunnel, as pip, git and
 *   the hubs use) against the same GET straight from the server, alternating rounds, curl's own
 *   `time_total`; beside it, no goal, the same over plain HTTP (each request parsed and forwarded
 *   by the proxy), and the CPU the proxy and the relay spent per download.
 * - `connect`: a CONNECT until its `200` against a TCP connect until connected, from this process,
 *   alternating batches; the goal is on the difference. Through the relay as well, and the proxy's
 *   CPU per CONNECT, reported.
 * - `idle_connections`: the proxy process's resident memory holding 1,000 idle tunnels (four
 *   proxies of 250, as four sessions would), against the same process holding none.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type RequestListener } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { connect, createServer as createNetServer, type AddressInfo, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { findExecutable, installDir } from "../src/platform/index.js";
import { managedVenvDir, venvPython } from "../src/python/index.js";
import { makeTestCa } from "../test/network/support.js";
import { cpuDuring, processCpuMs } from "./cpu.js";
import { goal, limitGoal } from "./goals.js";
import type { ProxyHostConfig } from "./networkProxy.js";
import { median, round } from "./stats.js";

const PAYLOAD_BYTES = 50 * 1024 * 1024;
/** Rounds of each download, alternating, after one warm-up of each. */
const DOWNLOAD_ROUNDS = 9;
/** Goal of the issue: a download through the proxy within 1.15× the direct one. */
const DOWNLOAD_BOUND = 1.15;
/** Batches of CONNECTs and of direct connects, alternating, and connections per batch. */
const CONNECT_BATCHES = 10;
const CONNECTS_PER_BATCH = 50;
/** Goal of the issue: a CONNECT's setup within 1 ms more than a direct connect. */
const CONNECT_EXTRA_MS = 1;
/** Idle tunnels held, spread over IDLE_PROXIES proxies (each holds at most MAX_PROXY_CONNECTIONS). */
const IDLE_TUNNELS = 1_000;
const IDLE_PROXIES = 4;
/** Tunnels opened at once while filling: within the proxies' listen queues. */
const IDLE_BATCH = 50;
/** How long the filled process is left before its memory is read. */
const IDLE_SETTLE_MS = 1_000;
/** Liveness bound on one child start or one transfer. */
const STEP_TIMEOUT_MS = 60_000;

interface Listening {
  readonly server: Server;
  readonly port: number;
}

async function listen(server: Server, host: string): Promise<Listening> {
  server.listen(0, host);
  await once(server, "listening");
  return { server, port: (server.address() as AddressInfo).port };
}

/** Runs `argv` and resolves with its stdout; rejects on a non-zero exit. Never blocks this process's loop, which serves the downloads. */
async function output(argv: readonly string[]): Promise<string> {
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, timeout: STEP_TIMEOUT_MS });
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const [code] = (await once(child, "close")) as [number | null];
  if (code !== 0) throw new Error(`${argv.join(" ")} exited ${code}: ${err}`);
  return out;
}

/** Starts a child and waits for its first line of stdout. */
async function started(child: ChildProcess, what: string): Promise<string> {
  let out = "";
  const timer = setTimeout(() => child.kill(), STEP_TIMEOUT_MS);
  try {
    for await (const chunk of child.stdout!) {
      out += String(chunk);
      if (out.includes("\n")) return out.split("\n")[0]!;
    }
    throw new Error(`${what} exited before it was ready`);
  } finally {
    clearTimeout(timer);
  }
}

/** curl's time_total for one GET of the payload, in ms, checking the bytes arrived. */
async function curlMs(args: readonly string[]): Promise<number> {
  const [seconds, size] = (await output(["curl", "-sS", "-o", "/dev/null", "-w", "%{time_total} %{size_download}", ...args])).trim().split(" ");
  if (Number(size) !== PAYLOAD_BYTES) throw new Error(`curl ${args.join(" ")} got ${size} bytes`);
  return Number(seconds) * 1000;
}

/** Median ms of `via` and `direct` over DOWNLOAD_ROUNDS alternating rounds after a warm-up of each. */
async function alternate(via: () => Promise<number>, direct: () => Promise<number>): Promise<{ via: number; direct: number }> {
  await via();
  await direct();
  const times = { via: [] as number[], direct: [] as number[] };
  for (let round = 0; round < DOWNLOAD_ROUNDS; round += 1) {
    times.via.push(await via());
    times.direct.push(await direct());
  }
  return { via: median(times.via), direct: median(times.direct) };
}

/** Opens a CONNECT to `authority` on a fresh connection from `open` and resolves with the socket once the 200 is in. */
async function tunnel(open: () => Socket, authority: string): Promise<Socket> {
  const socket = open();
  socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  let head = "";
  for (;;) {
    const [chunk] = (await once(socket, "data")) as [Buffer];
    head += chunk.toString();
    if (head.includes("\r\n\r\n")) break;
  }
  if (!head.startsWith("HTTP/1.1 200")) throw new Error(`CONNECT ${authority}: ${head.split("\r\n")[0]}`);
  return socket;
}

/** Median ms per kind over alternating batches. */
async function connectTimes(kinds: Record<string, () => Promise<Socket>>): Promise<Record<string, number>> {
  const times = Object.fromEntries(Object.keys(kinds).map((name) => [name, [] as number[]]));
  for (let batch = 0; batch <= CONNECT_BATCHES; batch += 1) {
    for (const [name, make] of Object.entries(kinds)) {
      for (let index = 0; index < CONNECTS_PER_BATCH; index += 1) {
        const began = performance.now();
        const socket = await make();
        const ms = performance.now() - began;
        socket.destroy();
        if (batch > 0) times[name]!.push(ms);
      }
    }
  }
  return Object.fromEntries(Object.entries(times).map(([name, list]) => [name, median(list)]));
}

function rssMb(pid: number): number {
  const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return round(kb / 1024);
}

/** Runs the three measures; skipped, saying why, without curl, openssl or the managed venv's Python. */
export async function benchNetwork(): Promise<Record<string, unknown>> {
  const missing = ["curl", "openssl"].filter((name) => findExecutable(name, process.env.PATH) === undefined);
  if (!existsSync(venvPython(managedVenvDir()))) missing.push("the managed venv (albedo setup)");
  if (missing.length > 0) return { skipped: `needs ${missing.join(" and ")}` };
  const dir = mkdtempSync(join(tmpdir(), "alb-bnet-"));
  const children: ChildProcess[] = [];
  const servers: Server[] = [];
  const held: Socket[] = [];
  try {
    const ca = makeTestCa(dir, "albedo bench CA");
    const payload = randomBytes(PAYLOAD_BYTES);
    const serve: RequestListener = (_req, res) => res.writeHead(200, { "content-type": "application/octet-stream", "content-length": payload.length }).end(payload);
    const plain = await listen(createHttpServer(serve), "127.0.0.2");
    const tls = await listen(createHttpsServer(ca.serverCert(["files.test"]), serve), "127.0.0.3");
    const holder = await listen(createNetServer((socket) => socket.on("error", () => undefined)), "127.0.0.4");
    servers.push(plain.server, tls.server, holder.server);

    const socketPaths = ["download", "connect", ...Array.from({ length: IDLE_PROXIES }, (_, index) => `idle${index}`)].map((name) => join(dir, `${name}.sock`));
    const config: ProxyHostConfig = {
      socketPaths,
      policy: { allow: [`files.test:${plain.port}`, `files.test:${tls.port}`, `127.0.0.2:${plain.port}`, `127.0.0.4:${holder.port}`] },
      names: { "files.test": "127.0.0.2" },
    };
    // A second proxy process whose files.test is the TLS server's address (same name, so the certificate fits).
    const tlsConfig: ProxyHostConfig = { ...config, socketPaths: [join(dir, "download-tls.sock")], names: { "files.test": "127.0.0.3" } };
    const host = spawn(process.execPath, [join(installDir(), "dist", "bench", "networkProxy.js"), JSON.stringify(config)], { stdio: ["pipe", "pipe", "inherit"] });
    const tlsHost = spawn(process.execPath, [join(installDir(), "dist", "bench", "networkProxy.js"), JSON.stringify(tlsConfig)], { stdio: ["pipe", "pipe", "inherit"] });
    children.push(host, tlsHost);
    await started(host, "the proxy process");
    await started(tlsHost, "the TLS proxy process");
    const relayEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", PYTHONPATH: join(installDir(), "kernel"), PYTHONDONTWRITEBYTECODE: "1" };
    const relays: ChildProcess[] = [];
    const relayFor = async (socketPath: string) => {
      const relay = spawn(venvPython(managedVenvDir()), [join(installDir(), "bench", "python", "egress_relay.py"), socketPath], { stdio: ["pipe", "pipe", "inherit"], env: relayEnv });
      children.push(relay);
      relays.push(relay);
      return Number(await started(relay, "the egress relay"));
    };
    const relayPort = await relayFor(socketPaths[0]!);
    const tlsRelayPort = await relayFor(tlsConfig.socketPaths[0]!);

    const cpu = { proxy: () => processCpuMs(host.pid!) + processCpuMs(tlsHost.pid!), relay: () => processCpuMs(relays[0]!.pid!) + processCpuMs(relays[1]!.pid!) };
    const downloads = 2 * (DOWNLOAD_ROUNDS + 1);
    const tlsRun = await cpuDuring(cpu, () =>
      alternate(
        () => curlMs(["--cacert", ca.caPath, "--proxy", `http://127.0.0.1:${tlsRelayPort}`, `https://files.test:${tls.port}/50mb`]),
        () => curlMs(["--cacert", ca.caPath, "--noproxy", "*", "--resolve", `files.test:${tls.port}:127.0.0.3`, `https://files.test:${tls.port}/50mb`]),
      ),
    );
    const plainRun = await cpuDuring(cpu, () =>
      alternate(
        () => curlMs(["--proxy", `http://127.0.0.1:${relayPort}`, `http://files.test:${plain.port}/50mb`]),
        () => curlMs(["--noproxy", "*", `http://127.0.0.2:${plain.port}/50mb`]),
      ),
    );
    // Half the downloads of each run went through the proxy.
    const perDownload = (ms: number) => round(ms / (downloads / 2));

    const target = `127.0.0.2:${plain.port}`;
    const proxyCpuBefore = processCpuMs(host.pid!);
    const connects = await connectTimes({
      direct: async () => {
        const socket = connect({ host: "127.0.0.2", port: plain.port, noDelay: true });
        await once(socket, "connect");
        return socket;
      },
      proxy: () => tunnel(() => connect(socketPaths[1]!), target),
    });
    // Every CONNECT of the proxy kind, warm-up batch included, went through this process; nothing else did meanwhile.
    const proxyCpuPerConnectUs = ((processCpuMs(host.pid!) - proxyCpuBefore) * 1000) / ((CONNECT_BATCHES + 1) * CONNECTS_PER_BATCH);
    const viaRelay = await connectTimes({ relay: () => tunnel(() => connect({ host: "127.0.0.1", port: relayPort, noDelay: true }), target) });

    const idleBefore = rssMb(host.pid!);
    const idleTarget = `127.0.0.4:${holder.port}`;
    for (let opened = 0; opened < IDLE_TUNNELS; opened += IDLE_BATCH) {
      const batch = Array.from({ length: IDLE_BATCH }, (_, index) => tunnel(() => connect(socketPaths[2 + ((opened + index) % IDLE_PROXIES)]!), idleTarget));
      held.push(...(await Promise.all(batch)));
    }
    await new Promise((resolve) => setTimeout(resolve, IDLE_SETTLE_MS));
    const idleAfter = rssMb(host.pid!);

    return {
      download_50mb: {
        proxy_median_ms: round(tlsRun.result.via),
        direct_median_ms: round(tlsRun.result.direct),
        proxy_cpu_ms: perDownload(tlsRun.cpuMs.proxy),
        relay_cpu_ms: perDownload(tlsRun.cpuMs.relay),
        ...goal(tlsRun.result.via, tlsRun.result.direct, DOWNLOAD_BOUND),
        plain_http: {
          proxy_median_ms: round(plainRun.result.via),
          direct_median_ms: round(plainRun.result.direct),
          times_direct: round(plainRun.result.via / plainRun.result.direct),
          proxy_cpu_ms: perDownload(plainRun.cpuMs.proxy),
          relay_cpu_ms: perDownload(plainRun.cpuMs.relay),
        },
      },
      connect: {
        proxy_median_ms: round(connects.proxy!),
        direct_median_ms: round(connects.direct!),
        extra_ms: round(connects.proxy! - connects.direct!),
        through_relay_median_ms: round(viaRelay.relay!),
        proxy_cpu_us_per_connect: round(proxyCpuPerConnectUs),
        ...limitGoal(connects.proxy! - connects.direct!, CONNECT_EXTRA_MS),
      },
      idle_connections: {
        tunnels: held.length,
        proxies: IDLE_PROXIES,
        rss_before_mb: idleBefore,
        rss_mb: idleAfter,
        kb_per_connection: round(((idleAfter - idleBefore) * 1024) / held.length),
      },
    };
  } finally {
    for (const socket of held) socket.destroy();
    for (const child of children) child.stdin?.end();
    await Promise.all(children.map((child) => (child.exitCode === null ? once(child, "exit") : undefined)));
    for (const server of servers) {
      (server as Server & { closeAllConnections?: () => void }).closeAllConnections?.();
      server.close();
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
