import { mkdir, readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_UNIX_SOCKET_PATH_BYTES } from "../../src/platform/index.js";
import {
  CONNECTION_FILE_PLACEHOLDER, KernelStartError, startKernel, substituteConnectionFile, type KernelLaunch,
} from "../../src/kernel/index.js";
import { ipykernelSpec, runCleanups, startTestKernel, tempDir } from "./fixtures.js";
import { testPython } from "./python.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(() => runCleanups(cleanups));

async function connectionFileOf(runDir: string): Promise<{ path: string; json: Record<string, unknown> }> {
  const name = (await readdir(runDir)).find((entry) => entry.endsWith(".json"))!;
  const path = join(runDir, name);
  return { path, json: JSON.parse(await readFile(path, "utf8")) as Record<string, unknown> };
}

describe("K-1 connection file and run dir", () => {
  it("creates the run dir 0700 and writes a 0600 IPC connection file with a random HMAC-SHA256 key", async () => {
    const kernel = await startTestKernel(cleanups);
    expect((await stat(kernel.runDir)).mode & 0o777).toBe(0o700);
    const { path, json } = await connectionFileOf(kernel.runDir);
    expect(path).toBe(kernel.client.connectionFile);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(json.transport).toBe("ipc");
    expect(json.signature_scheme).toBe("hmac-sha256");
    expect(json.key).toMatch(/^[0-9a-f]{64}$/);
    expect(String(json.ip).startsWith(kernel.runDir + "/")).toBe(true);
    const sockets = (await readdir(kernel.runDir)).filter((entry) => !entry.endsWith(".json"));
    expect(sockets.length).toBe(5);
    for (const socket of sockets) expect((await stat(join(kernel.runDir, socket))).isSocket()).toBe(true);
  });

  it("gives each kernel its own key", async () => {
    const [a, b] = await Promise.all([startTestKernel(cleanups), startTestKernel(cleanups)]);
    const keys = await Promise.all([a!, b!].map(async (kernel) => (await connectionFileOf(kernel.runDir)).json.key));
    expect(keys[0]).not.toBe(keys[1]);
  });

  it("works over TCP on loopback, with no socket files", async () => {
    const kernel = await startTestKernel(cleanups, { transport: "tcp" });
    const { json } = await connectionFileOf(kernel.runDir);
    expect(json.transport).toBe("tcp");
    expect(json.ip).toBe("127.0.0.1");
    const ports = ["shell_port", "iopub_port", "stdin_port", "control_port", "hb_port"].map((key) => json[key]);
    expect(new Set(ports).size).toBe(5);
    expect((await readdir(kernel.runDir)).length).toBe(1);
    const future = kernel.client.execute("print('over tcp')");
    expect((await future.done).status).toBe("ok");
    await kernel.client.shutdown();
    expect(await readdir(kernel.runDir)).toEqual([]);
  });

  it("refuses an IPC socket path longer than MAX_UNIX_SOCKET_PATH_BYTES before launching anything", async () => {
    const dir = await tempDir(cleanups);
    const runDir = join(dir, "r".repeat(MAX_UNIX_SOCKET_PATH_BYTES - dir.length));
    await mkdir(runDir, { mode: 0o700 });
    await expect(startKernel({ spec: ipykernelSpec(), runDir, cwd: dir })).rejects.toThrow(/MAX_UNIX_SOCKET_PATH_BYTES/);
    expect(await readdir(runDir)).toEqual([]);
  });

  it("passes extra argv and env to the kernel; a wrap hook gets the argv and the connection text, and delivers the file itself", async () => {
    const seen: KernelLaunch[] = [];
    const copy = join(await tempDir(cleanups), "delivered.json");
    const kernel = await startTestKernel(cleanups, {
      extraArgv: ["--IPKernelApp.name=albedo-test"],
      extraEnv: { ALBEDO_TEST_MARK: "marked" },
      wrap: (launch) => {
        seen.push(launch);
        // A stand-in for the sandbox: the connection reaches the kernel on a pipe, not through the run dir.
        return { argv: ["/bin/sh", "-c", 'cat <&3 > "$0" && exec "$@"', copy, ...substituteConnectionFile(launch.argv, copy)], fds: [], feed: launch.connection };
      },
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.argv.at(-1)).toBe("--IPKernelApp.name=albedo-test");
    expect(seen[0]!.argv).toContain(CONNECTION_FILE_PLACEHOLDER);
    expect(JSON.parse(seen[0]!.connection)).toMatchObject({ signature_scheme: "hmac-sha256", transport: "ipc" });
    expect(kernel.client.connectionFile).toBeUndefined();
    expect((await readdir(kernel.runDir)).filter((name) => name.endsWith(".json"))).toEqual([]);
    const outputs: string[] = [];
    const future = kernel.client.execute("import os; print(os.environ['ALBEDO_TEST_MARK'])");
    future.onOutput((output) => outputs.push((output.content as { text?: string }).text ?? ""));
    await future.done;
    expect(outputs.join("")).toBe("marked\n");
  });
});

describe("K-1 start failures", () => {
  it("rejects with the exit code and stderr tail when the process exits before ready, and cleans up", async () => {
    const dir = await tempDir(cleanups);
    const runDir = join(dir, "run");
    const spec = { argv: [testPython(), "-c", "import sys; sys.stderr.write('boom at boot\\n'); sys.exit(3)", "{connection_file}"], interruptMode: "signal" as const };
    const error = await startKernel({ spec, runDir, cwd: dir }).then(() => undefined, (reason: unknown) => reason);
    expect(error).toBeInstanceOf(KernelStartError);
    expect((error as KernelStartError).exitCode).toBe(3);
    expect((error as KernelStartError).stderrTail).toContain("boom at boot");
    expect(await readdir(runDir)).toEqual([]);
  });

  it("rejects an argv without the {connection_file} placeholder", async () => {
    const dir = await tempDir(cleanups);
    const spec = { argv: [testPython(), "-m", "ipykernel_launcher"], interruptMode: "signal" as const };
    await expect(startKernel({ spec, runDir: join(dir, "run"), cwd: dir })).rejects.toThrow(/\{connection_file\}/);
    expect(await readdir(join(dir, "run"))).toEqual([]);
  });

  it("reports a missing interpreter as a start error", async () => {
    const dir = await tempDir(cleanups);
    const spec = { argv: [join(dir, "no-such-python"), "-f", "{connection_file}"], interruptMode: "signal" as const };
    const error = await startKernel({ spec, runDir: join(dir, "run"), cwd: dir }).then(() => undefined, (reason: unknown) => reason);
    expect(error).toBeInstanceOf(KernelStartError);
    expect((error as KernelStartError).stderrTail).toMatch(/spawn failed/);
    expect(await readdir(join(dir, "run"))).toEqual([]);
  });
});
