/**
 * Durable kernel state (K-15) as a person meets it on the command line: the real binary, real
 * sandboxed kernels, a real daemon. `albedo sessions --resumable` lists closed sessions with a
 * checkpoint, `albedo exec --resume` and the console say what came back, `albedo restart --restore`
 * restarts a daemon session's kernel with its variables.
 */
import { describe, expect, it } from "vitest";
import { call } from "../daemon/support/daemon.js";
import { daemonFixture } from "../daemon/support/fixture.js";
import { testPython } from "../kernel/python.js";
import { ALBEDO_BIN, runAlbedo } from "../support/cli.js";
import { runOnPty } from "../support/pty.js";

const fixture = daemonFixture({ signal: "SIGKILL" });

const env = () => ({ ...process.env, HOME: fixture.dirs.home, ALBEDO_HOME: fixture.dirs.state, NO_COLOR: "1" });
const albedo = (args: readonly string[]) => runAlbedo(args, { cwd: fixture.dirs.workspace, env: env() });

/** A cell that kills its own kernel, as an OOM kill or a segfault would. */
const KILL_CELL = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)";
const RESTORED = "albedo: the kernel restarted and was restored from its checkpoint: restored 1 of 1 name";

describe("K-15 X checkpoints on the command line", () => {
  it("albedo sessions --resumable lists a closed exec session; albedo exec --resume brings its names back and says so", { timeout: 180_000 }, async () => {
    expect(await albedo(["sessions", "--resumable"])).toMatchObject({ code: 0, stdout: `no closed session in ${fixture.dirs.state} has a checkpoint to resume\n` });
    expect(await albedo(["exec", "-c", "x = 7"])).toMatchObject({ code: 0 });
    const listed = JSON.parse((await albedo(["sessions", "--resumable", "--json"])).stdout) as { resumable: { id: string; workspace: string; closed_at: string | null }[] };
    expect(listed.resumable).toHaveLength(1);
    const [closed] = listed.resumable;
    expect(closed).toMatchObject({ workspace: fixture.dirs.workspace, closed_at: expect.any(String) });
    const table = await albedo(["sessions", "--resumable"]);
    expect(table.stdout).toContain(closed!.id);
    expect(table.stdout).toContain("albedo console --resume ID");
    const resumed = await albedo(["exec", "--resume", closed!.id, "-c", "print(x * 6)"]);
    expect(resumed).toMatchObject({ code: 0, stdout: "42\n" });
    expect(resumed.stderr).toContain("albedo exec: resumed: restored 1 of 1 name");
  });

  it("albedo restart --restore restarts a daemon session's kernel with its names; without it, empty; GET /sessions?closed=resumable lists it once closed", { timeout: 180_000 }, async () => {
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const id = (await call(daemon, "POST", "/sessions", { workspace: fixture.dirs.workspace })).body.id as string;
    await call(daemon, "POST", `/sessions/${id}/execute`, { code: "y = 3" });
    const restored = await albedo(["restart", id, "--restore"]);
    expect(restored).toMatchObject({ code: 0, stdout: expect.stringMatching(new RegExp(`^restarted the kernel of session ${id} \\(.+\\): restored 1 of 1 name\\n$`)) });
    const stdout = async (code: string) => (await call(daemon, "POST", `/sessions/${id}/execute`, { code })).body.outputs.map((o: { content: { text?: string } }) => o.content.text).join("");
    expect(await stdout("print(y)")).toBe("3\n");
    expect((await albedo(["restart", id])).stdout).toMatch(new RegExp(`^restarted the kernel of session ${id} empty`));
    expect(await stdout("print('y' in globals())")).toBe("False\n");
    expect((await albedo(["restart", "0123456789ab", "--restore"])).code).not.toBe(0);
    expect((await call(daemon, "GET", "/sessions?closed=resumable")).body.resumable).toEqual([]);
    expect((await call(daemon, "GET", "/sessions?closed=everything")).status).toBe(400);
    // The plain restart emptied the checkpoint: a name defined after it gives the closed session something to resume.
    expect(await stdout("z = 5\nprint(z)")).toBe("5\n");
    expect((await call(daemon, "DELETE", `/sessions/${id}`)).status).toBe(204);
    const listed = (await call(daemon, "GET", "/sessions?closed=resumable")).body;
    expect(listed.sessions).toEqual([]);
    expect(listed.resumable).toEqual([{ id, workspace: fixture.dirs.workspace, closed_at: expect.any(String), checkpointed_at: expect.any(String) }]);
    expect((await call(daemon, "GET", "/sessions")).body).toEqual({ sessions: [] });
    expect((await albedo(["sessions", "--resumable"])).stdout).toContain(id);
  });

  it("the console says when its kernel died under it and came back restored: embedded, and on a daemon", { timeout: 240_000 }, async () => {
    const steps = [
      { expect: ">>> ", timeout: 90 },
      { send: "a = 1\r" },
      { expect: ">>> ", new: true, timeout: 30 },
      { send: `${KILL_CELL}\r` },
      { expect: RESTORED, new: true, timeout: 60 },
      { send: "print(a + 1)\r" },
      { expect: "2\r\n", new: true, timeout: 30 },
      { send: "\u0004" },
    ];
    const embedded = await runOnPty(testPython(), [process.execPath, ALBEDO_BIN, "console"], steps, env(), fixture.dirs.workspace);
    expect(embedded.failed).toBeNull();
    await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const attached = await runOnPty(testPython(), [process.execPath, ALBEDO_BIN, "console"], steps, env(), fixture.dirs.workspace);
    expect(attached.transcript).toContain("(daemon http");
    expect(attached.failed).toBeNull();
  });
});
