import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { DaemonClient, readDaemonInfo } from "../../src/api/index.js";
import { newOperationId } from "../../src/operations/index.js";
import { startFakeOpenAI } from "../model/fakeOpenAI.js";
import { call, envFor, killDaemon, ROOT } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";
import { spawnSync } from "node:child_process";
import { NO_SANDBOX } from "../support/sandbox.js";
import { poll } from "../support/poll.js";
import { alive } from "../support/process.js";
import { writeSkill } from "../support/skills.js";

const fixture = daemonFixture({ signal: "SIGKILL" });
const kernels: number[] = [];

afterEach(() => {
  for (const pid of kernels.splice(0)) if (alive(pid)) process.kill(pid, "SIGKILL");
});

function rowCounts(file: string): Record<string, number> {
  const db = new Database(file, { readonly: true });
  try {
    return Object.fromEntries(["receipts", "inputs", "turns"].map((table) => [table, (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n]));
  } finally {
    db.close();
  }
}

describe("O-2 restart", () => {
  it("after kill -9 every admitted input is there once, the running and the queued turns are abandoned with their reasons, replays answer as before", { timeout: 120_000 }, async () => {
    const { dirs } = fixture;
    const skillDir = writeSkill(join(dirs.workspace, ".agents", "skills"), "demo", { body: "original steps\n" });
    // A model that never answers: the first turn is still running when the daemon dies, the others wait.
    const model = await startFakeOpenAI();
    model.enqueue({ kind: "hang" });
    await writeFile(join(dirs.state, "settings.json"), JSON.stringify({ model: { provider: "openai", base_url: model.baseUrl, name: "fake" } }), { mode: 0o600 });
    const first = await fixture.start();
    const session = (await call(first, "POST", "/sessions", { workspace: dirs.workspace })).body;
    kernels.push(session.kernel.pid);
    const inputs = [
      { operation_id: newOperationId(), type: "message", text: "first" },
      { operation_id: newOperationId(), type: "command", command: "/demo", arguments: "go" },
      { operation_id: newOperationId(), type: "message", text: "third" },
    ];
    const answers = [];
    for (const input of inputs) answers.push(await call(first, "POST", `/sessions/${session.id}/events`, input));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    await poll(() => model.requests.length === 1, { what: "the first turn to ask the model" });

    await killDaemon(first, "SIGKILL");
    await model.close();
    expect(existsSync(join(dirs.state, "daemon.json"))).toBe(true);
    process.kill(session.kernel.pid, "SIGKILL");
    const dbFile = join(dirs.state, "albedo.db");
    await writeFile(join(skillDir, "SKILL.md"), "---\nname: demo\ndescription: The demo skill.\n---\nchanged steps\n");
    const before = rowCounts(dbFile);

    const second = await fixture.start();
    expect(second.stdout()).toContain("abandoned 1 running and 2 queued turns of the sessions before the restart");
    for (const [index, input] of inputs.entries()) {
      const replay = await call(second, "POST", `/sessions/${session.id}/events`, input);
      expect(replay.status).toBe(answers[index]!.status);
      expect(replay.body).toEqual(answers[index]!.body);
    }
    const abandoned = (await call(second, "GET", `/operations/${inputs[0]!.operation_id}`)).body;
    expect(abandoned).toMatchObject({ delivery: "cancelled", receipt: answers[0]!.body, turn: { state: "abandoned", outcome: { state: "abandoned", reason: expect.any(String) } } });
    // Its session is gone with the first daemon: a queued turn is abandoned, not left pending forever.
    const command = (await call(second, "GET", `/operations/${inputs[1]!.operation_id}`)).body;
    expect(command).toMatchObject({ delivery: "cancelled", receipt: answers[1]!.body, turn: { state: "abandoned", outcome: { state: "abandoned", reason: expect.stringContaining("before this turn ran") } } });
    expect((await call(second, "GET", `/operations/${inputs[2]!.operation_id}`)).body).toMatchObject({ delivery: "cancelled", turn: { state: "abandoned" } });
    expect(JSON.parse(command.turn.model_input).skill_activation.instructions).toBe("original steps");
    expect(rowCounts(dbFile)).toEqual(before);
    expect(before).toEqual({ receipts: 3, inputs: 3, turns: 3 });
    expect((await call(second, "GET", "/sessions")).body.sessions).toEqual([]);
  });
});

describe("D-1 daemon lifecycle", () => {
  it("SIGTERM closes every session's kernel and removes daemon.json; exit code 0", { timeout: 120_000 }, async () => {
    const { dirs } = fixture;
    const daemon = await fixture.start();
    const session = (await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body;
    kernels.push(session.kernel.pid);
    // The default mode, auto: a sandbox where bubblewrap works, none (with a warning) where it does not.
    expect(session.kernel.sandbox).toBe(NO_SANDBOX ? "none" : "bwrap");
    daemon.process.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expect(alive(session.kernel.pid)).toBe(false);
    expect(existsSync(join(dirs.state, "daemon.json"))).toBe(false);
  });

  it("refuses to start beside a live daemon for the same state dir, and listens on a Unix socket", { timeout: 60_000 }, async () => {
    const { dirs } = fixture;
    const socket = join(dirs.root, "d.sock");
    const daemon = await fixture.start(["--socket", socket]);
    const info = (await readDaemonInfo(dirs.state))!;
    expect(info).toMatchObject({ socket, pid: daemon.process.pid });
    const client = new DaemonClient(info, daemon.token);
    expect(await client.send("GET", "/health")).toMatchObject({ status: 200, body: { ok: true } });
    expect(await new DaemonClient(info, "wrong").send("GET", "/health")).toMatchObject({ status: 401 });
    const ws = await client.openStream("nope").catch((error: Error) => error);
    expect(String(ws)).toMatch(/404/);
    const second = spawnSync(process.execPath, [join(ROOT, "bin", "albedo"), "serve"], { env: envFor(dirs), encoding: "utf8", timeout: 30_000 });
    expect(second.status).toBe(1);
    expect(second.stderr).toContain("already runs");
    expect(await client.send("GET", "/health")).toMatchObject({ status: 200 });
    const bad = spawnSync(process.execPath, [join(ROOT, "bin", "albedo"), "serve", "--listen", "0.0.0.0:0"], { env: envFor(dirs), encoding: "utf8", timeout: 30_000 });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("loopback");
    daemon.process.kill("SIGTERM");
    await daemon.exited;
    await poll(() => !existsSync(socket), { what: "the socket file to go" });
  });

  it("K-10 --sandbox overrides the sandbox setting for every session it opens; a bad mode is a usage error", { timeout: 60_000 }, async () => {
    const { dirs } = fixture;
    const bad = spawnSync(process.execPath, [join(ROOT, "bin", "albedo"), "serve", "--sandbox", "sometimes"], { env: envFor(dirs), encoding: "utf8", timeout: 30_000 });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("--sandbox must be one of auto, required, off");
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--sandbox", "off"]);
    const session = (await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body;
    kernels.push(session.kernel.pid);
    expect(session.kernel.sandbox).toBe("none");
  });
});
