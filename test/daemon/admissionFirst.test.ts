/**
 * An admission is answered before the session's turns start: starting the first turn (its durable
 * move to running, the model's setup) is the turn's work, and when it ran inside the request,
 * every one of many admissions at once also waited for the others' (bench/ events_during_reads).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Daemon, type RequestEntry } from "../../src/daemon/index.js";
import { newOperationId } from "../../src/operations/index.js";
import { call, envFor, makeDirs, type Dirs } from "./support/daemon.js";
import { ScriptedSessions } from "./support/scriptedSessions.js";
import { poll } from "../support/poll.js";

let dirs: Dirs;
let daemon: Daemon;
let access: { url: string; token: string };
let sessions: ScriptedSessions;
/** What happened, in order: each answered request (its response finished) and each kick of the turns. */
const happened: string[] = [];

beforeAll(async () => {
  dirs = await makeDirs();
  sessions = new ScriptedSessions(dirs);
  daemon = await Daemon.start({
    stateDir: dirs.state, home: dirs.home, env: envFor(dirs), listen: { host: "127.0.0.1", port: 0 }, sessions,
    onRequest: (entry: RequestEntry) => void happened.push(`answered ${entry.method} ${entry.status}`),
  });
  access = { url: daemon.url, token: readFileSync(join(dirs.state, "daemon.token"), "utf8").trim() };
});

afterAll(async () => {
  await daemon?.close();
  await dirs?.cleanup();
});

describe("O-1 O-3 an admission does not wait for its turn to start", () => {
  it("the 202 goes out before the session's turns are kicked", async () => {
    const id = (await call(access, "POST", "/sessions", { workspace: dirs.workspace })).body.id as string;
    const hosted = sessions.get(id) as { turns: { kick(): void } };
    hosted.turns = { ...hosted.turns, kick: () => void happened.push("kicked") };
    happened.length = 0;
    const answer = await call(access, "POST", `/sessions/${id}/events`, { operation_id: newOperationId(), type: "message", text: "hi" });
    expect(answer.status).toBe(202);
    await poll(() => happened.includes("kicked"), { what: "the turns to be kicked" });
    expect(happened).toEqual(["answered POST 202", "kicked"]);
  });
});
