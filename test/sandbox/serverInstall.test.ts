/**
 * A project MCP server's sandbox shows the server's own install when a place the sandbox hides
 * holds it (K-10, M-2): a venv in the home, or in the host's /tmp (a checkout there), runs; the
 * state dir and the rest of those places stay hidden.
 */
import { spawn } from "node:child_process";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sandboxServer, type ServerSandboxPlaces } from "../../src/sandbox/index.js";
import { NO_SANDBOX } from "../support/sandbox.js";
import { tempDirs } from "../support/tempDirs.js";
import { collect, PYTHON, type RunResult } from "./fixture.js";

/** Dirs in the host's /tmp (a hidden place under test). */
const dirs = tempDirs("albedo-srv-");
/** The fixture's home, state dir and workspace, under /var/tmp: the host's /tmp is itself one of the hidden places tested. */
const fixtures = tempDirs("albedo-srv-", "/var/tmp");

/** A venv-shaped install at `prefix`: `bin/python` a link to this checkout's interpreter, with a pyvenv.cfg. */
function venvAt(prefix: string): string {
  mkdirSync(join(prefix, "bin"), { recursive: true });
  const python = join(prefix, "bin", "python");
  symlinkSync(realpathSync(PYTHON), python);
  writeFileSync(join(prefix, "pyvenv.cfg"), `home = ${join(realpathSync(PYTHON), "..")}\ninclude-system-site-packages = false\n`);
  writeFileSync(join(prefix, "marker.txt"), "the install\n");
  return python;
}

/** Runs `code` with `python` in the server sandbox of `places`; answers how it ended and what it printed. */
async function runServer(places: ServerSandboxPlaces, python: string, code: string): Promise<RunResult> {
  const launch = sandboxServer(places, { command: python, args: ["-c", code], env: { PATH: "/usr/bin:/bin" }, cwd: places.workspace });
  try {
    return await collect(spawn(launch.command, launch.args, { env: launch.env, stdio: ["ignore", "pipe", "pipe", ...launch.fds] }));
  } finally {
    launch.dispose();
  }
}

describe.skipIf(NO_SANDBOX)("K-10 M-2 a project server's sandbox shows the server's install, whatever hidden place holds it (real bwrap)", () => {
  afterEach(() => {
    dirs.cleanup();
    fixtures.cleanup();
  });

  function places(): ServerSandboxPlaces {
    const base = fixtures.make();
    const home = join(base, "home");
    const stateDir = join(home, ".albedo");
    const workspace = join(base, "project");
    mkdirSync(stateDir, { recursive: true });
    mkdirSync(workspace);
    writeFileSync(join(stateDir, "daemon.token"), "secret\n");
    return { home, stateDir, workspace };
  }

  const probe = (stateDir: string, hiddenFile: string) =>
    [
      "import os, sys, pathlib",
      "print(pathlib.Path(sys.prefix, 'marker.txt').read_text().strip())",
      `print(os.path.exists(${JSON.stringify(join(stateDir, "daemon.token"))}), os.path.exists(${JSON.stringify(hiddenFile)}))`,
    ].join("; ");

  it("a venv in the home runs; the state dir and the rest of the home stay hidden", async () => {
    const at = places();
    const python = venvAt(join(at.home, ".venvs", "server"));
    writeFileSync(join(at.home, "notes.txt"), "private\n");
    const ran = await runServer(at, python, probe(at.stateDir, join(at.home, "notes.txt")));
    expect(ran, ran.stderr).toMatchObject({ code: 0, stdout: "the install\nFalse False\n" });
  });

  it("a venv in the host's /tmp (a checkout there) runs; the rest of /tmp stays hidden", async () => {
    const at = places();
    const inTmp = dirs.make();
    const python = venvAt(join(inTmp, "checkout", ".venv"));
    writeFileSync(join(inTmp, "beside.txt"), "not the server's\n");
    const ran = await runServer(at, python, probe(at.stateDir, join(inTmp, "beside.txt")));
    expect(ran, ran.stderr).toMatchObject({ code: 0, stdout: "the install\nFalse False\n" });
  });
});
