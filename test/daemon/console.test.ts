import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, envFor, ROOT } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";
import { writeSkill } from "../support/skills.js";
import { poll } from "../support/poll.js";

const fixture = daemonFixture();

/** Runs `albedo console` with `input` on a pipe, kept open until `whileOpen` settles; resolves with its output once it exits. */
function runConsole(env: NodeJS.ProcessEnv, workspace: string, input: string, whileOpen?: Promise<unknown>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(ROOT, "bin", "albedo"), "console", "--workspace", workspace], { env, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.stdin.write(input);
  void (whileOpen ?? Promise.resolve()).finally(() => child.stdin.end()).catch(() => undefined);
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolve) =>
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

const SCRIPT = "print(6 * 7)\n/reload session\n/demo tidy up\n/nope\nlen?\n";

describe("D-5 console: attached to a running daemon, or embedded", () => {
  it("attaches to the daemon named in daemon.json; cells, /reload session and slash skills go through it", { timeout: 120_000 }, async () => {
    const { dirs } = fixture;
    writeSkill(join(dirs.workspace, ".agents", "skills"), "demo");
    const daemon = await fixture.start();
    // While it runs, the daemon lists its session as the console's.
    let listed: unknown;
    const seen = poll(async () => (listed = (await call(daemon, "GET", "/sessions")).body.sessions).length > 0, { what: "the console's session", timeoutMs: 60_000 });
    const result = await runConsole(envFor(dirs), dirs.workspace, SCRIPT, seen);
    await seen;
    expect(listed).toEqual([expect.objectContaining({ client: "console", workspace: dirs.workspace })]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`(daemon ${daemon.url})`);
    // IPython answers obj? with a page on the reply, not an output: the daemon passes it on.
    expect(result.stdout).toContain("Signature: len(obj, /)");
    expect(result.stdout).toContain("42\n");
    expect(result.stdout).toMatch(/reloaded: no change, \d+ skills\n/);
    expect(result.stdout).toMatch(/submitted \/demo as turn [0-9a-f-]+: the daemon's model answers it/);
    expect(result.stderr).toContain("/nope:");
    // The console closed its session on exit; the daemon keeps running.
    expect((await call(daemon, "GET", "/sessions")).body.sessions).toEqual([]);
    expect((await call(daemon, "GET", "/health")).status).toBe(200);
  });

  it("runs embedded when daemon.json names no live daemon", { timeout: 120_000 }, async () => {
    const { dirs } = fixture;
    writeSkill(join(dirs.workspace, ".agents", "skills"), "demo");
    const result = await runConsole(envFor(dirs), dirs.workspace, SCRIPT);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("(embedded)");
    expect(result.stdout).toContain("Signature: len(obj, /)");
    expect(result.stdout).toContain("42\n");
    expect(result.stdout).toMatch(/reloaded: no change, \d+ skills\n/);
    expect(result.stdout).toContain("activated skill demo");
  });
});
