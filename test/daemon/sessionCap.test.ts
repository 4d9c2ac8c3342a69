import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_SESSIONS } from "../../src/daemon/index.js";
import { MAX_SESSIONS_LIMIT } from "../../src/settings/index.js";
import { call, type DaemonProcess, type Dirs } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";

// Sessions of a notebook's kernel (K-13) boot nothing, so a cap can be filled in milliseconds; they count like any other.
const fixture = daemonFixture();

async function daemonWith(args: readonly string[] = [], settings?: object): Promise<{ dirs: Dirs; daemon: DaemonProcess }> {
  const dirs = await fixture.makeDirs();
  if (settings !== undefined) writeFileSync(join(dirs.state, "settings.json"), JSON.stringify(settings));
  const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0", ...args], undefined, { dirs });
  return { dirs, daemon };
}

const openExternal = (daemon: DaemonProcess, dirs: Dirs) => call(daemon, "POST", "/sessions", { workspace: dirs.workspace, kernel: "external", kernel_pid: process.pid });

describe("D-2 the session cap (daemon.max_sessions, albedo serve --max-sessions)", () => {
  it("holds MAX_SESSIONS when nothing sets it, and refuses the next open with 429 naming the bound", async () => {
    const { dirs, daemon } = await daemonWith();
    for (let i = 0; i < MAX_SESSIONS; i++) expect((await openExternal(daemon, dirs)).status).toBe(201);
    const refused = await openExternal(daemon, dirs);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: "too_many_sessions", limit: MAX_SESSIONS, detail: expect.stringContaining("(MAX_SESSIONS)") });
  });

  it("takes --max-sessions over the setting, and makes room when a session closes", async () => {
    const { dirs, daemon } = await daemonWith(["--max-sessions", "2"], { daemon: { max_sessions: 5 } });
    const first = await openExternal(daemon, dirs);
    expect((await openExternal(daemon, dirs)).status).toBe(201);
    const refused = await openExternal(daemon, dirs);
    expect(refused.body).toMatchObject({ code: "too_many_sessions", limit: 2, detail: expect.stringContaining("(--max-sessions)") });
    expect((await call(daemon, "DELETE", `/sessions/${first.body.id}`)).status).toBe(204);
    expect((await openExternal(daemon, dirs)).status).toBe(201);
  });

  it("reads daemon.max_sessions from the global settings at each open", async () => {
    const { dirs, daemon } = await daemonWith([], { daemon: { max_sessions: 1 } });
    expect((await openExternal(daemon, dirs)).status).toBe(201);
    expect((await openExternal(daemon, dirs)).body).toMatchObject({ code: "too_many_sessions", limit: 1, detail: expect.stringContaining("(daemon.max_sessions)") });
    writeFileSync(join(dirs.state, "settings.json"), JSON.stringify({ daemon: { max_sessions: 2 } }));
    expect((await openExternal(daemon, dirs)).status).toBe(201);
  });

  it("lets no more opens through than the cap when they race", async () => {
    const { dirs, daemon } = await daemonWith(["--max-sessions", "3"]);
    const answers = await Promise.all(Array.from({ length: 8 }, () => openExternal(daemon, dirs)));
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(3);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(5);
  });

  it("refuses --max-sessions outside 1 to MAX_SESSIONS_LIMIT before starting", async () => {
    for (const bad of ["0", String(MAX_SESSIONS_LIMIT + 1), "many"]) {
      await expect(daemonWith(["--max-sessions", bad])).rejects.toThrow(new RegExp(`--max-sessions takes a whole number from 1 to ${MAX_SESSIONS_LIMIT}`));
    }
  });
});
