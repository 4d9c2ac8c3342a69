/**
 * Settings from the command line (D-4): every write goes through a real daemon's settings API and
 * lands in the file of the scope asked for; with no daemon running, the command starts one.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readDaemonInfo } from "../../src/api/index.js";
import { runAlbedo } from "../support/cli.js";
import { daemonFixture } from "../daemon/support/fixture.js";
import { isSameProcessAlive } from "../../src/platform/index.js";
import { poll } from "../support/poll.js";
import { writeSkill } from "../support/skills.js";


const fixture = daemonFixture();

beforeEach(() => {
  writeSkill(join(fixture.dirs.workspace, ".agents", "skills"), "pdf-processing");
  writeSkill(join(fixture.dirs.workspace, ".agents", "skills"), "research");
});

afterEach(async () => {
  // A daemon a command started on demand belongs to this test too.
  const info = await readDaemonInfo(fixture.dirs.state);
  if (info !== undefined && isSameProcessAlive(info)) {
    process.kill(info.pid, "SIGTERM");
    await poll(() => !isSameProcessAlive(info), { what: "the on-demand daemon to exit" });
  }
});

function albedo(args: readonly string[]) {
  return runAlbedo(args, { cwd: fixture.dirs.workspace, env: { ...process.env, HOME: fixture.dirs.home, ALBEDO_HOME: fixture.dirs.state, NO_COLOR: "1" } });
}

const json = (file: string): unknown => JSON.parse(readFileSync(file, "utf8"));
const globalFile = () => join(fixture.dirs.state, "settings.json");
const projectFile = () => join(fixture.dirs.workspace, ".albedo", "settings.json");

describe("D-4 X albedo skills on|off|clear through the daemon", () => {
  it("writes the scope asked for, shows who decides, and warns with the closest skill for an unknown name", async () => {
    await fixture.start();
    const off = await albedo(["skills", "off", "pdf-processing", "reserch"]);
    expect(off.code).toBe(0);
    expect(off.stdout).toBe(`albedo skills off: wrote ${globalFile()} (global)\n  pdf-processing: off here (global)\n  reserch: off here (global)\n`);
    expect(off.stderr).toContain('warning: no skill named "reserch" in this workspace\'s catalog; saved anyway, for one installed later; did you mean research?');
    expect(json(globalFile())).toEqual({ skills: { off: ["pdf-processing", "reserch"] } });
    expect(existsSync(projectFile())).toBe(false);

    const on = await albedo(["skills", "on", "pdf-processing", "--project", "--json"]);
    expect(JSON.parse(on.stdout)).toMatchObject({ scope: "project", file: projectFile(), effective: { "pdf-processing": { enabled: true, decided_by: "project" } }, warnings: [] });
    expect(json(projectFile())).toEqual({ skills: { on: ["pdf-processing"] } });
    // The project decides now; the global file still says off.
    expect((await albedo(["skills", "list"])).stdout).toMatch(/pdf-processing\s+workspace\s+on, project\s/);

    const cleared = await albedo(["skills", "clear", "pdf-processing", "--project"]);
    expect(cleared.stdout).toContain("pdf-processing: off here (global)");
    expect(json(projectFile())).toEqual({ skills: { on: [] } });
    expect((await albedo(["skills", "prompt"])).stdout).not.toContain("<name>pdf-processing</name>");
  });

  it("starts a daemon for the call when none runs, which `albedo daemon stop` ends", async () => {
    expect(await readDaemonInfo(fixture.dirs.state)).toBeUndefined();
    const off = await albedo(["skills", "off", "research"]);
    expect(off.code).toBe(0);
    expect(off.stderr).toMatch(/albedo skills off: started a daemon at http:\/\/127\.0\.0\.1:\d+; it exits after 15 min without sessions/);
    expect(json(globalFile())).toEqual({ skills: { off: ["research"] } });
    const info = (await readDaemonInfo(fixture.dirs.state))!;
    expect(isSameProcessAlive(info)).toBe(true);
    const status = await albedo(["daemon", "status"]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^daemon +running at ${info.url}\\npid +${info.pid}\\nsessions +0\\nspare kernels +\\d+\\nuptime +\\d+ s\\n`));
    const stopped = await albedo(["daemon", "stop"]);
    expect(stopped).toMatchObject({ code: 0, stdout: `stopped the daemon at ${info.url} (pid ${info.pid})\n` });
    expect(isSameProcessAlive(info)).toBe(false);
    expect(await albedo(["daemon", "status"])).toMatchObject({ code: 1, stdout: expect.stringContaining(`no daemon runs for ${fixture.dirs.state}`) });
    expect((await albedo(["daemon", "stop"])).code).toBe(0);
  });

  it("a malformed settings file fails the command with the daemon's words and stays as it was", async () => {
    await fixture.start();
    await mkdir(join(fixture.dirs.workspace, ".albedo"), { recursive: true });
    await writeFile(projectFile(), "{ not json");
    const ran = await albedo(["skills", "off", "research", "--project"]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/albedo skills off: the daemon refused: .*settings\.json.*\(settings_file_invalid\)/);
    expect(readFileSync(projectFile(), "utf8")).toBe("{ not json");
  });
});

describe("D-4 X albedo settings get|set through the daemon", () => {
  it("sets sandbox, network, kernel.pool and model.* in the scope asked for, keeping the section's other fields", async () => {
    await fixture.start();
    expect((await albedo(["settings", "set", "sandbox", "required"])).stdout).toBe(`albedo settings set: sandbox = "required" in ${globalFile()} (global)\n`);
    await albedo(["settings", "set", "network", "true"]);
    await albedo(["settings", "set", "model.provider", "stub"]);
    await albedo(["settings", "set", "model.mode", "tool"]);
    await albedo(["settings", "set", "kernel.pool", "0"]);
    await albedo(["settings", "set", "daemon.max_sessions", "4"]);
    expect(json(globalFile())).toMatchObject({ sandbox: "required", network: true, model: { provider: "stub", mode: "tool" }, kernel: { pool: 0 }, daemon: { max_sessions: 4 } });
    expect((await albedo(["settings", "set", "model.name", "qwen", "--project"])).code).toBe(0);
    expect(json(projectFile())).toMatchObject({ model: { name: "qwen" } });
    const got = await albedo(["settings", "get", "model.name"]);
    expect(got.stdout).toBe('global: model.name = (not set)\nproject: model.name = "qwen"\n');
    expect(JSON.parse((await albedo(["settings", "get", "--global", "--json"])).stdout).global).toMatchObject({ file: globalFile(), settings: { sandbox: "required" } });
  });

  it("refuses an unknown key with the closest one, and a value the key does not take, before any daemon is asked", async () => {
    const key = await albedo(["settings", "set", "sandbx", "auto"]);
    expect(key.code).toBe(2);
    expect(key.stderr.split("\n")[0]).toBe("albedo settings set: no setting sandbx; did you mean sandbox?");
    const value = await albedo(["settings", "set", "kernel.pool", "many"]);
    expect(value.stderr.split("\n")[0]).toBe('albedo settings set: kernel.pool takes a whole number, got "many"');
    expect(await readDaemonInfo(fixture.dirs.state)).toBeUndefined();
  });

  it("refuses a global-only key in the project scope, naming the scope it lives in, before any daemon is asked", async () => {
    const cases = [["sandbox", "off"], ["network", "true"], ["kernel.pool", "0"], ["kernel.python", "/usr/bin/python3"], ["limits.memoryMB", "512"], ["daemon.max_sessions", "4"], ["model.base_url", "http://127.0.0.1:9/v1"], ["skills.default", "off"]];
    for (const [key, value] of cases) {
      const ran = await albedo(["settings", "set", key!, value!, "--project"]);
      expect(ran.code, `${key}: ${ran.stderr}`).toBe(2);
      expect(ran.stderr.split("\n")[0]).toBe(
        `albedo settings set: ${key} is read from the global settings only, so the project scope cannot set it (a project file sits in the workspace, which the kernel can write); set it in the global scope: drop --project`,
      );
    }
    expect(existsSync(projectFile())).toBe(false);
    expect(await readDaemonInfo(fixture.dirs.state)).toBeUndefined();
  });

  it("a VALUE that starts with - after its KEY is the value: the schema's range comes back naming key and value", async () => {
    await fixture.start();
    const ran = await albedo(["settings", "set", "kernel.pool", "-3"]);
    expect(ran.code, ran.stderr).toBe(1);
    expect(ran.stderr).not.toContain("unknown option");
    expect(ran.stderr).toMatch(/the daemon refused: .*kernel\.pool: must be an integer from 0 to 8, got -3/);
    expect(existsSync(globalFile())).toBe(false);
    expect((await albedo(["settings", "set", "model.name", "-dashed", "--project"])).code).toBe(0);
    expect(json(projectFile())).toMatchObject({ model: { name: "-dashed" } });
    // Anywhere else an unknown dash word is still an unknown option.
    expect((await albedo(["settings", "set", "-3", "kernel.pool"])).stderr).toMatch(/^albedo settings set: unknown option -3/);
  });

  it("a value the schema refuses comes back as the daemon's problem, and nothing is written", async () => {
    await fixture.start();
    const ran = await albedo(["settings", "set", "kernel.pool", "99"]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/the daemon refused: .*kernel\.pool.*\(invalid_body\)/);
    expect(existsSync(globalFile())).toBe(false);
  });
});
