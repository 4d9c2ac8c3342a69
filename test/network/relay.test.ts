/**
 * The kernel's side of the way out, with a real Python: the kernel package's relay on
 * 127.0.0.1:PORT carrying to a real proxy's Unix socket, the variables it gives set as a kernel
 * sets them, and urllib, pip's requests and pip itself (a child process) going through. The
 * managed venv's interpreter runs test/network/relay_client.py.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compilePolicy, openLocalCa, startEgressProxy, type ConnectionRecord, type EgressProxy, type LocalCa } from "../../src/network/index.js";
import { installDir } from "../../src/platform/index.js";
import { managedVenvDir, venvPython } from "../../src/python/index.js";
import { tempDirs } from "../support/tempDirs.js";
import { echoHandler, makeTestCa, mapResolver, startServer, type TestCa, type TestServer } from "./support.js";

const PYTHON = venvPython(managedVenvDir());
const CLIENT = fileURLToPath(new URL("./relay_client.py", import.meta.url));
/** Far above what one scenario takes: a pip download through two hops on a loaded machine. */
const SCENARIO_TIMEOUT_MS = 120_000;
const TOKEN = "index-token-0451";

const dirs = tempDirs("alb-rel-");
let testCa: TestCa;
let authority: LocalCa;
let files: TestServer;
let index: TestServer;
let wheel: { name: string; bytes: Buffer };
let proxy: EgressProxy;
let policy = compilePolicy(false);
const records: ConnectionRecord[] = [];

/** Runs the client scenario with a clean environment (no proxy variables of the host's), returning its JSON lines. */
async function scenario(...args: string[]): Promise<Record<string, unknown>[]> {
  const child = spawn(PYTHON, [CLIENT, proxy?.socketPath ?? "", authority?.bundlePath ?? "", ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dirs.make(), PYTHONPATH: join(installDir(), "kernel"), PYTHONDONTWRITEBYTECODE: "1", PIP_CONFIG_FILE: "/dev/null", PIP_NO_INPUT: "1" },
    stdio: ["ignore", "pipe", "pipe"],
    timeout: SCENARIO_TIMEOUT_MS,
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  if (code !== 0) throw new Error(`relay_client.py ${args.join(" ")} exited ${code}: ${err}`);
  return out.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A PEP 503 index of one wheel that answers only a request carrying the token. */
const indexHandler = (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => {
  if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(401).end("no token\n");
  const sha = createHash("sha256").update(wheel.bytes).digest("hex");
  if (req.url === "/simple/albedo-probe/") {
    return void res.writeHead(200, { "content-type": "text/html" }).end(`<html><body><a href="/files/${wheel.name}#sha256=${sha}">${wheel.name}</a></body></html>`);
  }
  if (req.url === `/files/${wheel.name}`) return void res.writeHead(200, { "content-type": "application/octet-stream" }).end(wheel.bytes);
  res.writeHead(404).end("not here\n");
};

beforeAll(async () => {
  testCa = makeTestCa(dirs.make());
  const wheelDir = dirs.make();
  const [built] = await scenario("wheel", wheelDir);
  wheel = { name: String(built!.wheel), bytes: readFileSync(join(wheelDir, String(built!.wheel))) };
  files = await startServer("127.0.0.2", echoHandler);
  index = await startServer("127.0.0.3", indexHandler, testCa.serverCert(["index.test"]));
  authority = await openLocalCa(dirs.make());
  proxy = await startEgressProxy({
    socketPath: join(dirs.make(), "proxy.sock"),
    policy: () => policy,
    onRecord: (record) => records.push(record),
    resolver: mapResolver({ "files.test": "127.0.0.2", "index.test": "127.0.0.3" }),
    env: { INDEX_TOKEN: TOKEN },
    authority,
  });
}, SCENARIO_TIMEOUT_MS);

afterAll(async () => {
  await proxy?.close();
  await Promise.all([files?.close(), index?.close()]);
  dirs.cleanup();
});

const allowAll = () =>
  compilePolicy({
    allow: [`files.test:${files.port}`, `index.test:${index.port}`],
    secrets: { "index.test": { headers: { Authorization: { from_env: "INDEX_TOKEN", format: "Bearer {}" } } } },
    upstream_ca: testCa.caPath,
  });

describe("N-2 the kernel package's relay: 127.0.0.1:PORT inside, the proxy's Unix socket behind it", () => {
  it("gives the variables every tool and child reads, with the CA bundle when there is one", async () => {
    policy = allowAll();
    const [started, fetched] = await scenario("fetch", `http://files.test:${files.port}/through`);
    expect(started!.port).toEqual(expect.any(Number));
    expect(fetched).toMatchObject({ status: 200 });
    const seen = JSON.parse(String(fetched!.body)) as { url: string };
    expect(seen.url).toBe("/through");
  }, SCENARIO_TIMEOUT_MS);

  it("carries urllib and requests to an allowed host, and shows them the 403 line for another", async () => {
    policy = allowAll();
    const lines = await scenario("fetch", `http://files.test:${files.port}/a`, "http://pypi.test/simple/", "https://pypi.test/simple/");
    expect(lines[1]).toMatchObject({ status: 200 });
    const line = "albedo: pypi.test is not allowed (not in network.allow); allow it: albedo network allow pypi.test";
    expect(lines[2]).toMatchObject({ status: 403, reason: line, body: `${line}\n` });
    expect(String(lines[3]!.error)).toContain(`Tunnel connection failed: 403 ${line}`);
    const viaRequests = await scenario("requests", `http://files.test:${files.port}/b`, "https://pypi.test/simple/");
    expect(viaRequests[1]).toMatchObject({ status: 200 });
    expect(String(viaRequests[2]!.error)).toContain(line);
  }, SCENARIO_TIMEOUT_MS);

  it("pip, a child process, downloads from an index whose token the proxy adds, trusting the local CA through PIP_CERT", async () => {
    policy = allowAll();
    records.length = 0;
    const dest = dirs.make();
    const lines = await scenario("pip", `https://index.test:${index.port}/simple/`, dest, "albedo-probe");
    expect(lines[1]).toMatchObject({ returncode: 0, files: [wheel.name] });
    expect(readFileSync(join(dest, wheel.name)).equals(wheel.bytes)).toBe(true);
    const seen = records.filter((record) => record.host === "index.test");
    expect(seen.map((record) => [record.method, record.path, record.intercepted, record.decision])).toEqual([
      ["GET", "/simple/albedo-probe/", true, "allowed"],
      ["GET", `/files/${wheel.name}`, true, "allowed"],
    ]);
    expect(seen[1]!.bytesDown).toBe(wheel.bytes.length);
    expect(JSON.stringify(records)).not.toContain(TOKEN);
  }, SCENARIO_TIMEOUT_MS);

  it("pip fails with the denial line when the index is not allowed", async () => {
    policy = compilePolicy({ allow: [`files.test:${files.port}`] });
    const dest = dirs.make();
    const lines = await scenario("pip", `https://index.test:${index.port}/simple/`, dest, "albedo-probe");
    expect(lines[1]!.returncode).not.toBe(0);
    expect(String(lines[1]!.output)).toContain(`403 albedo: index.test:${index.port} is not allowed (not in network.allow); allow it: albedo network allow index.test:${index.port}`);
  }, SCENARIO_TIMEOUT_MS);

  it("survives a cell that opens connections past its bound: the one past it gets a 503 line, and once they close the next request goes through", async () => {
    policy = allowAll();
    const lines = await scenario("spam", `http://files.test:${files.port}/after-spam`, "300");
    expect(lines[1]).toEqual({ held: 300, carried: 256 });
    const report = lines[2] as { while_full: Record<string, unknown>; after: Record<string, unknown>; carried: number };
    expect(report.while_full).toMatchObject({ status: 503, reason: "albedo: the egress relay carries 256 connections already (MAX_RELAY_CONNECTIONS)" });
    expect(report.after).toMatchObject({ status: 200 });
    expect(report.carried).toBe(0);
    expect(lines[3]).toEqual({ closed: true });
  }, SCENARIO_TIMEOUT_MS);
});
