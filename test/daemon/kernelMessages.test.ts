/**
 * Kernels that write past the output bounds on their own iopub socket (a cell can reach it, and
 * the kernel signs with its own key): four sessions of a real daemon at once, each kernel
 * sandboxed, each sending one message larger than MAX_KERNEL_MESSAGE_BYTES, or a flood of
 * messages just under it.
 */
import { describe, expect, it } from "vitest";
import { processMemoryMb } from "../../bench/pss.js";
import { KERNEL_RECEIVE_HIGH_WATER_MARK, LOST_IDLE_GRACE_MS, MAX_KERNEL_BYTES_IN_FLIGHT, MAX_KERNEL_MESSAGE_BYTES } from "../../src/kernel/limits.js";
import { call, type DaemonProcess } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";

const MIB = 1024 * 1024;
const SESSIONS = 4;
/** What each kernel sends in one message: past MAX_KERNEL_MESSAGE_BYTES, and what took the daemon to 2.5 GB at four at once. */
const SENT_MIB = 100;
/** How much the daemon's peak resident memory may grow meanwhile: a bound on memory, not on time. */
const MAX_GROWTH_MIB = 200;

const fixture = daemonFixture();

/** The daemon's peak resident memory (VmHWM), in MiB. */
const daemonPeakMib = (daemon: DaemonProcess): number => processMemoryMb(daemon.process.pid!).peak;

/** A daemon with `count` sessions open, each kernel sandboxed. */
async function sandboxedSessions(count: number): Promise<{ daemon: DaemonProcess; ids: string[] }> {
  const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
  const ids: string[] = [];
  for (let n = 0; n < count; n += 1) {
    const opened = await call(daemon, "POST", "/sessions", { workspace: fixture.dirs.workspace });
    expect(opened.body.kernel.sandbox).toBe("bwrap");
    ids.push(opened.body.id as string);
  }
  return { daemon, ids };
}

/** A cell that sends one display_data of `mib` MiB straight on the kernel's iopub socket, past the kernel package's own stream cut. */
function rawMessage(mib: number): string {
  return [
    "kernel = get_ipython().kernel",
    `big = 'x' * (${mib} * 1024 * 1024)`,
    "kernel.session.send(kernel.iopub_socket, 'display_data', {'data': {'text/plain': big}, 'metadata': {}}, parent=kernel.get_parent('shell'))",
    "del big",
  ].join("\n");
}

describe("B K-2 D-1 a message over MAX_KERNEL_MESSAGE_BYTES from a kernel is never received", () => {
  it(`${SESSIONS} sandboxed kernels each send ${SENT_MIB} MiB on iopub at once: each execution says it was dropped, the daemon's memory stays flat, the sessions keep working`, { timeout: 240_000 }, async () => {
    const { daemon, ids } = await sandboxedSessions(SESSIONS);
    const before = daemonPeakMib(daemon);
    const answers = await Promise.all(ids.map((id) => call(daemon, "POST", `/sessions/${id}/execute`, { code: rawMessage(SENT_MIB) })));
    const note = `[albedo: the kernel sent a message over MAX_KERNEL_MESSAGE_BYTES (${MAX_KERNEL_MESSAGE_BYTES / MIB}.0 MB) on iopub; it was dropped, with what the kernel sent on iopub until albedo connected again]\n`;
    for (const answer of answers) {
      expect(answer.body.status).toBe("ok");
      expect(answer.body.outputs).toContainEqual(expect.objectContaining({ msg_type: "stream", content: { name: "stderr", text: note } }));
    }
    expect(daemonPeakMib(daemon) - before).toBeLessThan(MAX_GROWTH_MIB);
    expect(daemon.stderr().match(/the kernel sent a message over MAX_KERNEL_MESSAGE_BYTES/g)).toHaveLength(SESSIONS);
    const after = await Promise.all(ids.map((id) => call(daemon, "POST", `/sessions/${id}/execute`, { code: "print(1 + 1)" })));
    for (const answer of after) expect(answer.body.outputs).toEqual([expect.objectContaining({ msg_type: "stream", content: { name: "stdout", text: "2\n" } })]);
  });
});

/** Each flooding message: just under MAX_KERNEL_MESSAGE_BYTES, so ZeroMQ takes it. */
const FLOOD_MIB = MAX_KERNEL_MESSAGE_BYTES / MIB - 4;
/** Messages each flooding kernel sends at once: four kernels' worth took the daemon past 2 GB when ZeroMQ queued 1000 per socket. */
const FLOOD_MESSAGES = 8;
/**
 * Messages' worth the runtime itself may hold beside what ZeroMQ queues: the copies a decode makes
 * while it runs (the frame, its text, the parsed string, the cut) and frames and strings of earlier
 * messages the collector has not freed yet (measured: about ten at once in this flood).
 */
const DECODE_COPIES = 12;
/** Kernels flooding at once in the test of one session's bound: few enough to stay within MAX_KERNEL_BYTES_IN_FLIGHT together (four do not, see the next test). */
const FLOODING_PER_SESSION_TEST = 2;

/**
 * A cell that sends `count` display_data messages of `mib` MiB straight on the kernel's iopub
 * socket, all sharing one buffer (ZeroMQ sends it without copying, so the kernel pays for one),
 * after setting its own send queue to `sendQueue` messages when given (a kernel can: its queue is
 * its own, and past it the kernel drops what it sends, its idle status too).
 */
function flood(mib: number, count: number, sendQueue?: number): string {
  return [
    "import time, zmq",
    "kernel = get_ipython().kernel",
    // On the thread that owns the socket, which sends in order what the cell hands it.
    ...(sendQueue === undefined ? [] : [`kernel.iopub_thread.io_loop.add_callback(lambda: kernel.iopub_thread.socket.setsockopt(zmq.SNDHWM, ${sendQueue}))`, "time.sleep(0.5)"]),
    `big = 'x' * (${mib} * 1024 * 1024)`,
    "frames = kernel.session.serialize(kernel.session.msg('display_data', {'data': {'text/plain': big}, 'metadata': {}}, parent=kernel.get_parent('shell')))",
    "del big",
    `for _ in range(${count}): kernel.iopub_socket.send_multipart(frames, copy=False)`,
  ].join("\n");
}

describe("B K-2 D-1 kernels flooding iopub with messages under MAX_KERNEL_MESSAGE_BYTES", () => {
  it(`${FLOODING_PER_SESSION_TEST} sandboxed kernels each send ${FLOOD_MESSAGES} messages of ${FLOOD_MIB} MiB at once: the daemon holds at most KERNEL_RECEIVE_HIGH_WATER_MARK + 1 of them per kernel, and a well-behaved session keeps answering meanwhile`, { timeout: 600_000 }, async () => {
    const { daemon, ids } = await sandboxedSessions(FLOODING_PER_SESSION_TEST + 1);
    const [calm, ...flooding] = ids as [string, ...string[]];
    const before = daemonPeakMib(daemon);
    let floodsDone = 0;
    const floods = Promise.all(flooding.map(async (id) => {
      const answer = await call(daemon, "POST", `/sessions/${id}/execute`, { code: flood(FLOOD_MIB, FLOOD_MESSAGES) });
      floodsDone += 1;
      return answer;
    }));
    // The calm session runs cells one after another while the floods are taken in: each answers right, and the first before every flood ended.
    const calmAnswers = [];
    for (let n = 0; n < 3; n += 1) calmAnswers.push({ answer: await call(daemon, "POST", `/sessions/${calm}/execute`, { code: `print(${n} + 1)` }), floodsDone });
    for (const [n, { answer }] of calmAnswers.entries()) expect(answer.body.outputs).toEqual([expect.objectContaining({ msg_type: "stream", content: { name: "stdout", text: `${n + 1}\n` } })]);
    expect(calmAnswers[0]!.floodsDone).toBeLessThan(flooding.length);
    for (const answer of await floods) {
      // Each ends on its own idle, which came behind its whole flood, however long the others' took.
      expect(answer.body.status).toBe("ok");
      expect(answer.body.outputs).toContainEqual(expect.objectContaining({ msg_type: "display_data" }));
      expect(JSON.stringify(answer.body.outputs)).not.toContain("no idle status came");
    }
    const held = flooding.length * (KERNEL_RECEIVE_HIGH_WATER_MARK + 1) + DECODE_COPIES;
    expect(daemonPeakMib(daemon) - before).toBeLessThan(held * FLOOD_MIB + MAX_GROWTH_MIB);
  });

  it("a kernel whose own send queue drops its idle in a flood still ends its execution, LOST_IDLE_GRACE_MS after its last message, with a note", { timeout: 240_000 }, async () => {
    const { dirs } = fixture;
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const id = (await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body.id as string;
    const answer = await call(daemon, "POST", `/sessions/${id}/execute`, { code: `${flood(FLOOD_MIB, FLOOD_MESSAGES, 1)}\nprint('sent')` });
    expect(answer.body.status).toBe("ok");
    const note = `[albedo: no idle status came from the kernel within LOST_IDLE_GRACE_MS (${LOST_IDLE_GRACE_MS} ms) of its last message for this execution; the kernel dropped it, or never sent it]\n`;
    expect(answer.body.outputs).toContainEqual(expect.objectContaining({ msg_type: "stream", content: { name: "stderr", text: note } }));
    // The session goes on: the next cell is answered (what that kernel's shrunken send queue drops of its outputs is its own loss).
    expect((await call(daemon, "POST", `/sessions/${id}/execute`, { code: "print(1 + 1)" })).body.status).toBe("ok");
  });
});

/** Sessions flooding at once beside a quiet one: their queues alone hold more than MAX_KERNEL_BYTES_IN_FLIGHT. */
const FLOODERS = 8;
/** Messages each of them sends. */
const GLOBAL_FLOOD_MESSAGES = 8;
/**
 * What the daemon may hold at its peak, derived from the budget: what the kernels' accounts hold
 * (MAX_KERNEL_BYTES_IN_FLIGHT); the frames of the kernels cut, until the collector frees them (what
 * their accounts held when cut: within the budget again); and the copies decoding makes of the
 * messages (their text and parsed values, DECODE_COPIES messages at the bound).
 */
const BUDGET_BOUND_MIB = (2 * MAX_KERNEL_BYTES_IN_FLIGHT + DECODE_COPIES * MAX_KERNEL_MESSAGE_BYTES) / MIB;

describe("B K-2 D-1 MAX_KERNEL_BYTES_IN_FLIGHT bounds what all kernels together make the daemon hold", () => {
  it(`${FLOODERS} sandboxed kernels flood iopub at once beside a quiet session: the daemon's peak stays within the budget, the kernels holding the most are cut with the reason, the quiet session answers`, { timeout: 600_000 }, async () => {
    const { daemon, ids } = await sandboxedSessions(FLOODERS + 1);
    const [quiet, ...flooding] = ids as [string, ...string[]];
    const before = daemonPeakMib(daemon);
    const floods = Promise.all(flooding.map((id) => call(daemon, "POST", `/sessions/${id}/execute`, { code: flood(FLOOD_MIB, GLOBAL_FLOOD_MESSAGES) })));
    const quietAnswer = await call(daemon, "POST", `/sessions/${quiet}/execute`, { code: "print(6 * 7)" });
    const answers = await floods;
    const peak = daemonPeakMib(daemon) - before;
    console.log(`[M3] peak growth ${peak.toFixed(0)} MiB with ${FLOODERS} kernels flooding ${GLOBAL_FLOOD_MESSAGES} x ${FLOOD_MIB} MiB`);
    expect(quietAnswer.body.outputs).toEqual([expect.objectContaining({ msg_type: "stream", content: { name: "stdout", text: "42\n" } })]);
    const cut = answers.filter((answer) => JSON.stringify(answer.body).includes("MAX_KERNEL_BYTES_IN_FLIGHT"));
    console.log(`[M3] ${cut.length} of ${FLOODERS} flooding kernels cut`);
    expect(cut.length).toBeGreaterThan(0);
    // The others took their whole flood in and ended on their own idle.
    for (const answer of answers.filter((each) => !cut.includes(each))) expect(answer.body.status).toBe("ok");
    for (const answer of cut) expect(JSON.stringify(answer.body)).toMatch(/past MAX_KERNEL_BYTES_IN_FLIGHT \(512\.0 MiB\) for all kernels together: [\d.]+ MiB held, [\d.]+ MiB of it from this kernel, the most of any/);
    expect(peak).toBeLessThan(BUDGET_BOUND_MIB + MAX_GROWTH_MIB);
    // The quiet session still answers after, and /health too.
    expect((await call(daemon, "POST", `/sessions/${quiet}/execute`, { code: "print(1 + 1)" })).body.outputs).toEqual([expect.objectContaining({ content: { name: "stdout", text: "2\n" } })]);
    expect((await call(daemon, "GET", "/health")).status).toBe(200);
  });
});
