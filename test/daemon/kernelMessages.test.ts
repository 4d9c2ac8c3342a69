/**
 * Kernels that write past the output bounds on their own iopub socket (a cell can reach it, and
 * the kernel signs with its own key): four sessions of a real daemon at once, each kernel
 * sandboxed, each sending one message larger than MAX_KERNEL_MESSAGE_BYTES.
 */
import { describe, expect, it } from "vitest";
import { processMemoryMb } from "../../bench/pss.js";
import { MAX_KERNEL_MESSAGE_BYTES } from "../../src/kernel/limits.js";
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
    const { dirs } = fixture;
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const ids: string[] = [];
    for (let n = 0; n < SESSIONS; n += 1) {
      const opened = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace });
      expect(opened.body.kernel.sandbox).toBe("bwrap");
      ids.push(opened.body.id as string);
    }
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
