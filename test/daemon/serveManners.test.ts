/** `albedo serve` as a person starting it meets it: where the token is, a request to try, request logging, and exiting when idle. */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";
import { poll } from "../support/poll.js";
import { alive } from "../support/process.js";
import { writeSkill } from "../support/skills.js";

const fixture = daemonFixture({ signal: "SIGKILL" });

describe("D-1 albedo serve tells a person how to reach it", () => {
  it("prints where the token is and one request that works as printed", async () => {
    const { dirs } = fixture;
    const daemon = await fixture.start();
    const token = join(dirs.state, "daemon.token");
    // The lines after "listening" may come in a later chunk of the pipe.
    await poll(() => /\n {2}curl .*\/health\n/.test(daemon.stdout()), { what: "the example request line" });
    expect(daemon.stdout()).toContain(`albedo serve: the bearer token is in ${token} (mode 0600); try:\n`);
    const example = /\n {2}(curl .*\/health)\n/.exec(daemon.stdout())![1]!;
    expect(example).toBe(`curl -H "Authorization: Bearer $(cat ${token})" ${daemon.url}/health`);
    const ran = spawnSync("sh", ["-c", `${example} -s`], { encoding: "utf8", timeout: 10_000 });
    expect(JSON.parse(ran.stdout)).toMatchObject({ ok: true, sessions: 0 });
  });

  it("--verbose logs each request's method, path, status and time, and never the token", async () => {
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--verbose"]);
    await call(daemon, "GET", `/health?token=${daemon.token}`);
    await call(daemon, "GET", "/nowhere");
    await poll(() => /GET \/nowhere 404/.test(daemon.stderr()), { what: "the request log line" });
    expect(daemon.stderr()).toMatch(/^albedo serve: GET \/health 200 \d+ ms$/m);
    expect(daemon.stderr()).toMatch(/^albedo serve: GET \/nowhere 404 \d+ ms$/m);
    expect(daemon.stdout() + daemon.stderr()).not.toContain(daemon.token);
  });
});

describe("D-1 K-13 a daemon started on demand exits after a named idle period with no sessions", () => {
  it("--idle-exit: stays while a session is open, exits (status 0) once none has been for the period", { timeout: 90_000 }, async () => {
    const { dirs } = fixture;
    writeSkill(join(dirs.workspace, ".agents", "skills"), "demo");
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--idle-exit", "2", "--pool", "0", "--sandbox", "off"]);
    // The lines after "listening" may come in a later chunk of the pipe.
    await poll(() => daemon.stdout().includes("albedo serve: exits after 2 s without sessions\n"), { what: "the idle-exit line" });
    const session = (await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(alive(daemon.process.pid!)).toBe(true);
    expect((await call(daemon, "DELETE", `/sessions/${session.id}`)).status).toBe(204);
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expect(daemon.stdout()).toContain("albedo serve: no sessions for 2 s, closing sessions\n");
    expect(alive(session.kernel.pid)).toBe(false);
  });

  it("refuses a bad period (--idle-exit, --mcp-idle), and --idle-exit with --on-demand, as usage errors", () => {
    const bin = join(import.meta.dirname, "..", "..", "bin", "albedo");
    for (const args of [["--idle-exit", "0"], ["--idle-exit", "soon"], ["--idle-exit", "5", "--on-demand"], ["--mcp-idle", "0"], ["--mcp-idle", "1.5"], ["--mcp-idle", "99999999"]]) {
      const ran = spawnSync(process.execPath, [bin, "serve", ...args], { encoding: "utf8", timeout: 30_000 });
      expect(ran.status, args.join(" ")).toBe(2);
    }
  });
});
