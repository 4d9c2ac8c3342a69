import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  APP_ERROR_NUMBERS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RPC_HARD_MESSAGE_BYTES, RPC_MAX_MESSAGE_BYTES, RPC_MAX_PARAMS_DEPTH,
} from "../../src/rpc/index.js";
import type { Session } from "../../src/session/index.js";
import { openSession, run, sessionDirs, type SessionDirs } from "../session/fixtures.js";
import { makeFifo } from "./trees.js";
import { poll } from "../support/poll.js";
import { alive } from "../support/process.js";
import { roots, writeSkill } from "../support/skills.js";

/** How long a raw probe waits for a reply before calling it "no reply" (only the hard-cap probe should need it). */
const REPLY_WAIT_MS = 5_000;
/** Liveness bound for the kernel to die, be noticed and come back; far above normal, far below a hang. */
const RESTART_WAIT_MS = 30_000;
/** Nesting of the deep-params probe: far past RPC_MAX_PARAMS_DEPTH, deep enough to overflow JSON.stringify, well inside the frame limit. */
const HOSTILE_PARAMS_DEPTH = 100_000;
/** Per-test bound: the probes cell waits REPLY_WAIT_MS once for the hard-cap probe. */
const SESSION_TEST_MS = 90_000;

interface LogLine {
  readonly level: string;
  readonly message: string;
  readonly data?: unknown;
}

interface WireReply {
  readonly id: unknown;
  readonly result?: { skills?: { name: string }[] };
  readonly error?: { code: number; message: string; data?: Record<string, unknown> };
}

/** The raw DEALER probe script with its constants filled in. */
function probeCell(): string {
  return readFileSync(join(import.meta.dirname, "raw_rpc.py"), "utf8")
    .replace("__HARD_CAP_BYTES__", String(RPC_HARD_MESSAGE_BYTES))
    .replace("__REPLY_WAIT_MS__", String(REPLY_WAIT_MS))
    .replace("__DEEP_PARAMS_LEVELS__", String(HOSTILE_PARAMS_DEPTH));
}

/** Cell code proving the namespaces still answer: prints this test's skill names and whether /demo is in the command catalog. */
const STILL_WORKS = [
  "import json",
  "_names = [s['name'] for s in (await skills.list())['skills'] if s['name'] in ('demo', 'nasty')]",
  "_commands = [c['name'] for c in (await commands.catalog())['commands']]",
  "print(json.dumps({'skills': _names, 'demo': '/demo' in _commands}))",
].join("\n");

describe("B K-4 K-6 hostile RPC from inside a real session kernel", () => {
  let dirs: SessionDirs;
  let session: Session;
  const logs: LogLine[] = [];

  beforeAll(async () => {
    dirs = await sessionDirs();
    writeSkill(roots.wsAgents(dirs.workspace), "demo");
    const nasty = writeSkill(roots.wsAgents(dirs.workspace), "nasty");
    makeFifo(join(nasty, "pipe"));
    symlinkSync("/dev/zero", join(nasty, "zero"));
    writeFileSync(join(nasty, "ok.txt"), "ok\n");
    session = await openSession(dirs, { log: (level, message, data) => logs.push({ level, message, data }) });
  }, SESSION_TEST_MS);
  afterAll(async () => {
    await session?.close();
    await dirs?.cleanup();
  }, SESSION_TEST_MS);

  it("answers each malformed, oversized, too deep or unauthorised frame with its error, drops the hard-cap frame, and keeps serving", async () => {
    const before = logs.length;
    const out = await run(session, probeCell());
    const replies = JSON.parse(out.trim().split("\n").at(-1)!) as Record<string, WireReply | null>;
    const code = (name: string) => replies[name]?.error?.code;

    expect(code("oversized")).toBe(APP_ERROR_NUMBERS.limit_exceeded);
    expect(replies.oversized!.error!.message).toContain("RPC_MAX_MESSAGE_BYTES");
    expect(replies.oversized!.error!.data).toMatchObject({ limit: "RPC_MAX_MESSAGE_BYTES", max: RPC_MAX_MESSAGE_BYTES });
    expect(replies.hard_cap).toBeNull();
    expect(code("malformed")).toBe(PARSE_ERROR);
    expect(code("garbage")).toBe(PARSE_ERROR);
    expect(code("array")).toBe(INVALID_REQUEST);
    expect(replies.wrong_token).toMatchObject({ id: 4, error: { code: APP_ERROR_NUMBERS.forbidden } });
    expect(code("no_token")).toBe(APP_ERROR_NUMBERS.forbidden);
    expect(code("extra_parts")).toBe(APP_ERROR_NUMBERS.forbidden);
    expect(replies.unknown_method).toMatchObject({ id: 6, error: { code: METHOD_NOT_FOUND } });
    expect(replies.bad_params).toMatchObject({ id: 8, error: { code: APP_ERROR_NUMBERS.invalid_params } });
    expect(replies.unknown_param).toMatchObject({ id: 9, error: { code: APP_ERROR_NUMBERS.invalid_params } });
    expect(replies.fifo_read).toMatchObject({ id: 10, error: { code: APP_ERROR_NUMBERS.invalid_params } });
    expect(replies.zero_read).toMatchObject({ id: 11, error: { code: APP_ERROR_NUMBERS.invalid_params } });
    expect(replies.climb_read).toMatchObject({ id: 12, error: { code: APP_ERROR_NUMBERS.invalid_params } });
    expect(replies.deep_params).toMatchObject({ id: 14, error: { code: APP_ERROR_NUMBERS.limit_exceeded, data: { limit: "RPC_MAX_PARAMS_DEPTH", max: RPC_MAX_PARAMS_DEPTH } } });
    expect(replies.deep_params!.error!.message).toContain(`${RPC_MAX_PARAMS_DEPTH} levels`);
    expect(replies.after!.result!.skills!.map((s) => s.name)).toEqual(expect.arrayContaining(["demo", "nasty"]));

    const refusals = logs.slice(before).filter((line) => line.message === "rpc: refused a message with a missing or wrong token");
    expect(refusals).toHaveLength(3);
    expect(JSON.parse((await run(session, STILL_WORKS)).trim())).toEqual({ skills: ["demo", "nasty"], demo: true });
  }, SESSION_TEST_MS);

  it("the namespaces raise typed errors for special-file resources and keep working", async () => {
    const code = [
      "from albedo import AlbedoError",
      "for _resource in ['pipe', 'zero', '../x', 'missing']:",
      "    try:",
      "        await skills.read('nasty', _resource)",
      "    except AlbedoError as _error:",
      "        print(_resource, type(_error).__name__, _error.code)",
      "print(sorted((await skills.resources('nasty'))['resources']))",
    ].join("\n");
    expect((await run(session, code)).trim().split("\n")).toEqual([
      "pipe InvalidParams invalid_params",
      "zero InvalidParams invalid_params",
      "../x InvalidParams invalid_params",
      "missing NotFound not_found",
      "['SKILL.md', 'ok.txt']",
    ]);
  }, SESSION_TEST_MS);

  it("drops and logs a forged iopub message with a bad signature; the session keeps working", async () => {
    const forge = [
      "from jupyter_client.session import Session as _Forger",
      "_k = get_ipython().kernel",
      "_Forger(key=b'not-the-session-key').send(_k.iopub_socket, 'stream', {'name': 'stdout', 'text': 'FORGED\\n'}, parent=_k.get_parent())",
      "print('GENUINE')",
    ].join("\n");
    const before = logs.length;
    const out = await run(session, forge);
    expect(out).toContain("GENUINE");
    expect(out).not.toContain("FORGED");
    const dropped = logs.slice(before).filter((line) => line.message === "dropped a kernel message");
    expect(dropped.map((line) => line.data)).toEqual([{ channel: "iopub", reason: "bad signature" }]);
    expect(JSON.parse((await run(session, STILL_WORKS)).trim()).demo).toBe(true);
  }, SESSION_TEST_MS);

  it("a kernel SIGKILLed mid-call fails the execution with a kernel-died error; the session restarts it and skills work again", async () => {
    const firstPid = session.kernel.pid!;
    const future = session.kernel.execute(["print('reading', flush=True)", "while True:", "    await skills.read('demo')"].join("\n"));
    let started = false;
    future.onOutput((output) => {
      if (output.header.msg_type === "stream") started = true;
    });
    const outcome = future.done.then(
      () => "finished",
      (error: unknown) => String(error),
    );
    await poll(() => started, { what: "the read loop to start", timeoutMs: RESTART_WAIT_MS });
    process.kill(firstPid, "SIGKILL");
    expect(await outcome).toMatch(/died|exit|killed/i);
    await poll(() => session.kernel.pid !== firstPid && ["idle", "ready"].includes(session.kernel.status), { what: "the restarted kernel", timeoutMs: RESTART_WAIT_MS });
    expect(alive(firstPid)).toBe(false);
    expect(JSON.parse((await run(session, STILL_WORKS)).trim())).toEqual({ skills: ["demo", "nasty"], demo: true });
    expect((await run(session, "print((await skills.read('demo'))['content'].splitlines()[0])")).trim()).toBe("---");
  }, SESSION_TEST_MS);
});
