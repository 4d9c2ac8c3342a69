import { execFileSync } from "node:child_process";
import { closeSync, constants, existsSync, mkdirSync, openSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeRunDir, RUN_BASE_DIR, RUN_DIR_OWNER_FILE, sweepRunDirs } from "../../src/session/runDirs.js";
import { tempDirs } from "../support/tempDirs.js";

const dirs = tempDirs("albedo-rundirs-");
const fifos: string[] = [];
afterAll(() => {
  // A reader left blocked on a FIFO (the bug this file guards against) gets its end of file.
  for (const fifo of fifos) if (existsSync(fifo)) closeSync(openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK));
  dirs.cleanup();
});

describe("K-9 B sweeping run dirs", () => {
  it("a FIFO a kernel planted as a run dir's owner file is not waited on: the sweep ends and keeps the live session's dir", async () => {
    const state = dirs.make();
    const live = await makeRunDir(state);
    const planted = join(state, RUN_BASE_DIR, "planted");
    mkdirSync(planted, { recursive: true });
    const fifo = join(planted, RUN_DIR_OWNER_FILE);
    execFileSync("mkfifo", [fifo]);
    fifos.push(fifo);
    expect(await sweepRunDirs(state)).toBe(0);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(planted)).toBe(true);
  });

  it("a dir whose owner file is not a regular file counts as ownerless: removed once past the grace period", async () => {
    const state = dirs.make();
    const planted = join(state, RUN_BASE_DIR, "old");
    mkdirSync(planted, { recursive: true });
    const fifo = join(planted, RUN_DIR_OWNER_FILE);
    execFileSync("mkfifo", [fifo]);
    fifos.push(fifo);
    const past = new Date(Date.now() - 3_600_000);
    utimesSync(planted, past, past);
    expect(await sweepRunDirs(state)).toBe(1);
    expect(existsSync(planted)).toBe(false);
  });
});
