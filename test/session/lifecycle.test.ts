import { existsSync, readFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Session } from "../../src/session/index.js";
import { openSession, run, sessionDirs, type SessionDirs } from "./fixtures.js";
import { poll } from "../support/poll.js";
import { alive } from "../support/process.js";
import { roots, writeSkill } from "../support/skills.js";

/** Liveness bound for waits in this file: far above the expected time, far below a hung cell (100 s). */
const WAIT_MS = 20_000;
/** How long a held request waits for the interrupt: far longer than it can take to arrive, however loaded the machine. */
const INTERRUPT_ARRIVAL_S = 120;

let dirs: SessionDirs | undefined;
let session: Session | undefined;

afterEach(async () => {
  await session?.close();
  await dirs?.cleanup();
  session = undefined;
  dirs = undefined;
});

describe("K-4 interrupt ends an awaiting cell", () => {
  it("interrupts `await asyncio.sleep(100)` and the session stays usable", async () => {
    dirs = await sessionDirs();
    session = await openSession(dirs);
    const future = session.kernel.execute("import asyncio\nprint('waiting', flush=True)\nawait asyncio.sleep(100)");
    let printed = "";
    future.onOutput((output) => (printed += output.header.msg_type === "stream" ? (output.content as { text: string }).text : ""));
    await poll(() => printed.includes("waiting"), { what: "the cell to reach its await", timeoutMs: WAIT_MS });
    const started = Date.now();
    await session.kernel.interrupt();
    const reply = await future.done;
    expect(reply).toMatchObject({ status: "error", ename: "CancelledError" });
    expect(Date.now() - started).toBeLessThan(WAIT_MS);
    expect(await run(session, "print('still here')")).toBe("still here\n");
  });
});

describe("K-4 a SIGINT wakes the cell's thread", () => {
  it("every thread of a session's kernel but the main one blocks SIGINT, so Linux can give the signal to no other", async () => {
    dirs = await sessionDirs();
    session = await openSession(dirs);
    const probe = [
      "import json, os, signal, threading",
      "bit = 1 << (signal.SIGINT - 1)",
      "def blocks(tid):",
      "    with open(f'/proc/self/task/{tid}/status') as status:",
      "        mask = next(line for line in status if line.startswith('SigBlk:'))",
      "    return bool(int(mask.split()[1], 16) & bit)",
      "main = threading.main_thread().native_id",
      "tids = [int(tid) for tid in os.listdir('/proc/self/task')]",
      "print(json.dumps({'threads': len(tids), 'main_blocks': blocks(main), 'others_taking': [tid for tid in tids if tid != main and not blocks(tid)]}))",
    ].join("\n");
    const seen = JSON.parse(await run(session, probe)) as { threads: number; main_blocks: boolean; others_taking: number[] };
    expect(seen.threads).toBeGreaterThan(3);
    expect(seen).toMatchObject({ main_blocks: false, others_taking: [] });
  });
});

/**
 * Opens a session, runs `setup` (a hook that holds marked cells in ipykernel's own code), then runs
 * `marked` and interrupts it; returns its reply, the names of its error outputs and what it printed.
 */
async function interruptHeld(setup: readonly string[], marked: string): Promise<{ reply: unknown; errors: string[]; printed: string }> {
  dirs = await sessionDirs();
  session = await openSession(dirs);
  await run(session, setup.join("\n"));
  const future = session.kernel.execute(marked);
  let printed = "";
  const errors: string[] = [];
  future.onOutput((output) => {
    if (output.header.msg_type === "stream") printed += (output.content as { text: string }).text;
    if (output.header.msg_type === "error") errors.push((output.content as { ename: string }).ename);
  });
  await session.kernel.interrupt();
  return { reply: await future.done, errors, printed };
}

describe("K-2 an interrupt that lands before the cell's first line", () => {
  it("is the cell's KeyboardInterrupt, with a reply, and the session stays usable", async () => {
    // An input transformer that dawdles on marked cells: ipykernel's own code, after execute_input and before the cell runs.
    // It waits far longer than the interrupt can take to arrive, however loaded the machine, so the interrupt always lands in it.
    const { reply, errors, printed } = await interruptHeld([
      "import time",
      "def _dawdle(lines):",
      "    if any('# dawdle' in line for line in lines):",
      `        time.sleep(${INTERRUPT_ARRIVAL_S})`,
      "    return lines",
      "get_ipython().input_transformers_post.append(_dawdle)",
    ], "print('ran')  # dawdle");
    // ipykernel alone sends no reply here (the client would report NoExecuteReply after its grace).
    expect(reply).toMatchObject({ status: "error", ename: "KeyboardInterrupt" });
    expect(errors).toEqual(["KeyboardInterrupt"]);
    expect(printed).toBe("");
    expect(await run(session!, "get_ipython().input_transformers_post.clear()\nprint('still here')")).toBe("still here\n");
  });

  it("is the cell's KeyboardInterrupt when it lands while ipykernel is still publishing execute_input", async () => {
    // ipykernel's request code from execute_input to the cell, held open on marked cells until the
    // interrupt has arrived: whatever handler was in place gets it, then the request goes on.
    const { reply, errors, printed } = await interruptHeld([
      "import signal, time",
      "_kernel = get_ipython().kernel",
      "_stock_publish = _kernel._publish_execute_input",
      "def _publish_then_wait(code, parent, execution_count):",
      "    if '# wait for the interrupt' not in code:",
      "        return _stock_publish(code, parent, execution_count)",
      "    handler, arrived = signal.getsignal(signal.SIGINT), []",
      "    def _note(signum, frame):",
      "        arrived.append(signum)",
      "        handler(signum, frame)",
      "    signal.signal(signal.SIGINT, _note)",
      "    try:",
      "        _stock_publish(code, parent, execution_count)",
      `        end = time.monotonic() + ${INTERRUPT_ARRIVAL_S}`,
      "        while not arrived and time.monotonic() < end:",
      "            time.sleep(0.01)",
      "    finally:",
      "        signal.signal(signal.SIGINT, handler)",
      "_kernel._publish_execute_input = _publish_then_wait",
    ], "print('ran')  # wait for the interrupt");
    // Raised there, the interrupt escaped ipykernel's request code and no reply came (NoExecuteReply).
    expect(reply).toMatchObject({ status: "error", ename: "KeyboardInterrupt" });
    expect(errors).toEqual(["KeyboardInterrupt"]);
    expect(printed).toBe("");
    expect(await run(session!, "del _kernel._publish_execute_input\nprint('still here')")).toBe("still here\n");
  });
});

describe("K-9 supervision", () => {
  it("fails the running execution when the kernel is killed, restarts it and re-injects the namespaces", async () => {
    dirs = await sessionDirs();
    writeSkill(roots.wsAgents(dirs.workspace), "demo");
    session = await openSession(dirs);
    const firstPid = session.kernel.pid!;
    const future = session.kernel.execute("import time\ntime.sleep(100)");
    await poll(() => session!.kernel.status === "busy", { what: "the cell to start", timeoutMs: WAIT_MS });
    process.kill(firstPid, "SIGKILL");
    await expect(future.done).rejects.toThrow(/died|exit|killed/i);
    await poll(() => session!.kernel.status === "idle" || session!.kernel.status === "ready", { what: "the restarted kernel", timeoutMs: WAIT_MS });
    expect(session.kernel.pid).not.toBe(firstPid);
    expect(alive(firstPid)).toBe(false);
    const out = await run(session, "print(type(skills).__name__, (await commands.demo('x'))['name'])");
    expect(out.trim()).toBe("Skills demo");
  });

  it("sweeps run dirs left by a runtime that died (kill -9), and keeps those of live owners", async () => {
    dirs = await sessionDirs();
    const { spawnSync } = await import("node:child_process");
    const { mkdir, writeFile } = await import("node:fs/promises");
    const dead = spawnSync("true").pid!;
    const stale = join(dirs.stateDir, "run", "deadbeef0000");
    const live = join(dirs.stateDir, "run", "a11ve0000000");
    await mkdir(stale, { recursive: true });
    await mkdir(live, { recursive: true });
    await writeFile(join(stale, "owner.pid"), `${dead}\n`);
    await writeFile(join(stale, "rpc"), "a socket file left behind");
    await writeFile(join(live, "owner.pid"), `${process.pid}\n`);
    // A live pid with another start time: the owner died and its pid went to another process.
    const reused = join(dirs.stateDir, "run", "reused000000");
    await mkdir(reused, { recursive: true });
    await writeFile(join(reused, "owner.pid"), JSON.stringify({ pid: process.pid, start_time: "1" }));
    session = await openSession(dirs);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(reused)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(JSON.parse(readFileSync(join(session.runDir, "owner.pid"), "utf8"))).toMatchObject({ pid: process.pid, start_time: expect.stringMatching(/^\d+$/) });
    expect(existsSync(join(session.runDir, "owner.pid"))).toBe(true);
  });

  it("leaves no process, socket or run dir after close", async () => {
    dirs = await sessionDirs();
    session = await openSession(dirs);
    const pid = session.kernel.pid!;
    const runDir = session.runDir;
    expect((await readdir(runDir)).length).toBeGreaterThan(0);
    await session.close();
    expect(alive(pid)).toBe(false);
    expect(existsSync(runDir)).toBe(false);
    expect(await readdir(join(dirs.stateDir, "run"))).toEqual([]);
  });
});
