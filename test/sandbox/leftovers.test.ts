/**
 * The sandbox keeps a workspace's `.agents` and `.albedo` read-only, making them when they are
 * missing so a kernel cannot create them to plant skills or settings; once no session uses a
 * folder it made, it removes it again. Real `albedo exec` and daemon processes, real sandboxed
 * kernels.
 */
import { existsSync } from "node:fs";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, envFor, type DaemonProcess } from "../daemon/support/daemon.js";
import { daemonFixture } from "../daemon/support/fixture.js";
import { runAlbedo } from "../support/cli.js";
import { poll } from "../support/poll.js";
import { NO_SANDBOX } from "../support/sandbox.js";

const fixture = daemonFixture();

/** Python printing, one line each, what became of trying to create the protected folders' contents. */
const PLANT = [
  "import os",
  "def tryit(fn):",
  "    try: fn(); return 'ALLOWED'",
  "    except OSError as e: return e.strerror",
  "print(tryit(lambda: os.makedirs('.agents/skills/planted')))",
  "print(tryit(lambda: open('.albedo/settings.json', 'w').write('{}')))",
].join("\n");

describe.skipIf(NO_SANDBOX)("K-10 sessions leave no empty .agents or .albedo behind, and their kernels still cannot create them", () => {
  it("albedo exec: the kernel cannot plant a skill or settings; once it exits neither folder is left", async () => {
    const { dirs } = fixture;
    const run = await runAlbedo(["exec", "--sandbox", "required", "-c", `${PLANT}\nprint(sorted(os.listdir('.')))`], { cwd: dirs.workspace, env: envFor(dirs) });
    expect(run.stderr).toBe("");
    expect(run.stdout).toBe("Read-only file system\nRead-only file system\n['.agents', '.albedo']\n");
    expect(await readdir(dirs.workspace)).toEqual([]);
  });

  it("a folder albedo exec made stays, read-only, while a daemon's session uses it", async () => {
    const { dirs } = fixture;
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    // The exec session makes both folders, then waits for the daemon's session to open on the same workspace.
    const waiting = "import os, time\nfor _ in range(600):\n    if os.path.exists('go'): break\n    time.sleep(0.1)\nprint('done')";
    const exec = runAlbedo(["exec", "--sandbox", "required", "-c", waiting], { cwd: dirs.workspace, env: envFor(dirs) });
    await poll(() => existsSync(join(dirs.workspace, ".agents")), { what: "albedo exec to make .agents" });
    const id = await openOn(daemon, dirs.workspace);
    await writeFile(join(dirs.workspace, "go"), "");
    expect((await exec).stdout).toBe("done\n");
    // Removing them now would lift the daemon's sandbox's read-only mounts there.
    expect(existsSync(join(dirs.workspace, ".agents"))).toBe(true);
    expect(await planted(daemon, id)).toBe("Read-only file system\nRead-only file system\n");
    expect((await call(daemon, "DELETE", `/sessions/${id}`)).status).toBe(204);
  });

  it("in one daemon the last session out removes the folders the first one made, unless the user put something there", async () => {
    const { dirs } = fixture;
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const first = await openOn(daemon, dirs.workspace);
    const second = await openOn(daemon, dirs.workspace);
    expect((await call(daemon, "DELETE", `/sessions/${first}`)).status).toBe(204);
    expect((await readdir(dirs.workspace)).sort()).toEqual([".agents", ".albedo"]);
    expect(await planted(daemon, second)).toBe("Read-only file system\nRead-only file system\n");
    // The user writes project settings from outside the sandbox: that folder is theirs now.
    await writeFile(join(dirs.workspace, ".albedo", "settings.json"), "{}\n");
    expect((await call(daemon, "DELETE", `/sessions/${second}`)).status).toBe(204);
    expect(await readdir(dirs.workspace)).toEqual([".albedo"]);
  });
});

async function openOn(daemon: DaemonProcess, workspace: string): Promise<string> {
  const opened = await call(daemon, "POST", "/sessions", { workspace });
  expect(opened.status, JSON.stringify(opened.body)).toBe(201);
  return opened.body.id as string;
}

/** What the session's kernel printed trying to plant a skill and settings (PLANT). */
async function planted(daemon: DaemonProcess, id: string): Promise<string> {
  const answer = await call(daemon, "POST", `/sessions/${id}/execute`, { code: PLANT });
  return answer.body.outputs.map((o: { content: { text?: string } }) => o.content.text ?? "").join("");
}
