/** What the CLI says after Ctrl-C: nothing when the cell stops, the reason when the kernel refuses, a notice when it keeps running. */
import { PassThrough, Writable } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CliIO } from "../../src/cli/plumbing/command.js";
import { INTERRUPT_NOTICE_MS, interruptRunning } from "../../src/cli/terminal/interrupt.js";

class Captured extends Writable {
  text = "";
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString("utf8");
    done();
  }
}

function cliIO(): CliIO & { stderr: Captured } {
  return { stdout: new Captured(), stderr: new Captured(), stdin: new PassThrough(), env: {}, cwd: "/" };
}

/** A cell the test ends when it likes. */
function runningCell(): { ended: Promise<void>; end(): void } {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  return { ended, end };
}

const NEXT = "press Ctrl-C again to quit";
/** A notice period given instead of INTERRUPT_NOTICE_MS. */
const SHORT_NOTICE_MS = 10;

afterEach(() => vi.useRealTimers());

describe("X Ctrl-C on a running cell tells the person when the interrupt did not take", () => {
  it("says nothing when the cell ends within INTERRUPT_NOTICE_MS", async () => {
    vi.useFakeTimers();
    const io = cliIO();
    const cell = runningCell();
    interruptRunning({ interrupt: async () => cell.end(), ended: cell.ended, io, who: "albedo exec", next: NEXT });
    await vi.advanceTimersByTimeAsync(INTERRUPT_NOTICE_MS * 2);
    expect(io.stderr.text).toBe("");
  });

  it("says the cell is still running INTERRUPT_NOTICE_MS after an interrupt it swallowed, with what to do next", async () => {
    vi.useFakeTimers();
    const io = cliIO();
    const cell = runningCell();
    interruptRunning({ interrupt: async () => undefined, ended: cell.ended, io, who: "albedo exec", next: NEXT });
    await vi.advanceTimersByTimeAsync(INTERRUPT_NOTICE_MS - 1);
    expect(io.stderr.text).toBe("");
    await vi.advanceTimersByTimeAsync(1);
    expect(io.stderr.text).toBe(`albedo exec: the cell is still running ${INTERRUPT_NOTICE_MS / 1000} s after the interrupt; ${NEXT}\n`);
    cell.end();
  });

  it("gives the reason when the kernel cannot be interrupted, control characters made visible, and no notice after it", async () => {
    vi.useFakeTimers();
    const io = cliIO();
    const cell = runningCell();
    interruptRunning({ interrupt: async () => Promise.reject(new Error("no interrupt_reply\u001b[2J")), ended: cell.ended, io, who: "albedo console", next: NEXT });
    await vi.advanceTimersByTimeAsync(INTERRUPT_NOTICE_MS * 2);
    expect(io.stderr.text).toBe(`albedo console: could not interrupt the kernel (no interrupt_reply␛[2J); ${NEXT}\n`);
    cell.end();
  });

  it("names a chat's turn as what is interrupted", async () => {
    vi.useFakeTimers();
    const io = cliIO();
    const turn = runningCell();
    interruptRunning({ interrupt: async () => Promise.reject(new Error("connect ECONNREFUSED")), ended: turn.ended, io, who: "albedo chat", what: "turn", next: NEXT });
    await vi.advanceTimersByTimeAsync(0);
    expect(io.stderr.text).toBe(`albedo chat: could not interrupt the turn (connect ECONNREFUSED); ${NEXT}\n`);
    const slow = cliIO();
    interruptRunning({ interrupt: async () => undefined, ended: turn.ended, io: slow, who: "albedo chat", what: "turn", next: NEXT });
    await vi.advanceTimersByTimeAsync(INTERRUPT_NOTICE_MS);
    expect(slow.stderr.text).toBe(`albedo chat: the turn is still running ${INTERRUPT_NOTICE_MS / 1000} s after the interrupt; ${NEXT}\n`);
    turn.end();
  });

  it("stays quiet when the request fails after the cell already ended", async () => {
    vi.useFakeTimers();
    const io = cliIO();
    const cell = runningCell();
    let refuse!: (error: Error) => void;
    const refused = new Promise<void>((_resolve, reject) => (refuse = reject));
    interruptRunning({ interrupt: () => refused, ended: cell.ended, io, who: "albedo exec", next: NEXT, noticeMs: SHORT_NOTICE_MS });
    cell.end();
    await cell.ended;
    refuse(new Error("kernel gone"));
    // Handlers run in the order they were attached: once this one has, the CLI's own has seen the refusal.
    await refused.catch(() => undefined);
    // And once its notice period has passed, the notice would have been written too.
    await vi.advanceTimersByTimeAsync(SHORT_NOTICE_MS);
    expect(io.stderr.text).toBe("");
  });
});
