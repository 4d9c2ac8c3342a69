import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { envFor } from "../daemon/support/daemon.js";
import { daemonFixture } from "../daemon/support/fixture.js";
import { runAlbedo } from "../support/cli.js";

const fixture = daemonFixture();

describe("W-1 albedo web", () => {
  it("starts a daemon when none runs and prints a one-time link with --no-browser; a second run prints another", async () => {
    const { dirs } = fixture;
    try {
      const first = await runAlbedo(["web", "--no-browser"], { cwd: dirs.workspace, env: envFor(dirs) });
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toContain("started a daemon");
      expect(first.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/login#code=[0-9a-f]{64}\n$/);
      const second = await runAlbedo(["web", "--no-browser"], { cwd: dirs.workspace, env: envFor(dirs) });
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).not.toBe(first.stdout);
    } finally {
      // The on-demand daemon this started is stopped the way a person would, whatever failed above.
      expect((await runAlbedo(["daemon", "stop"], { cwd: dirs.workspace, env: envFor(dirs) })).code).toBe(0);
    }
  });

  it("prints the link instead of claiming a browser opened: without a display, and when the opener fails", async () => {
    const { dirs } = fixture;
    await fixture.start();
    const { DISPLAY: _display, WAYLAND_DISPLAY: _wayland, BROWSER: _browser, ...rest } = envFor(dirs);
    const headless = await runAlbedo(["web"], { cwd: dirs.workspace, env: rest });
    expect(headless.code, headless.stderr).toBe(0);
    expect(headless.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/login#code=[0-9a-f]{64}\n$/);
    expect(headless.stderr).toContain("no display here");
    const failing = await runAlbedo(["web"], { cwd: dirs.workspace, env: { ...rest, BROWSER: "false" } });
    expect(failing.code, failing.stderr).toBe(0);
    expect(failing.stdout).toMatch(/\/login#code=/);
    expect(failing.stderr).toContain("false could not open a browser; open the link above yourself");
    const opened = await runAlbedo(["web"], { cwd: dirs.workspace, env: { ...rest, BROWSER: "true" } });
    expect(opened.stdout).toBe("");
    expect(opened.stderr).toContain("opened the console");
  });

  it("says a daemon on a Unix socket cannot be reached by a browser", async () => {
    const { dirs } = fixture;
    await fixture.start(["--socket", join(dirs.state, "d.sock")]);
    const run = await runAlbedo(["web", "--no-browser"], { cwd: dirs.workspace, env: envFor(dirs) });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("Unix socket");
    expect(run.stdout).toBe("");
  });

  it("--help says what it does and takes --no-browser", async () => {
    const run = await runAlbedo(["web", "--help"], { cwd: fixture.dirs.workspace, env: envFor(fixture.dirs) });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("--no-browser");
    expect(run.stdout).toContain("web console");
  });
});
