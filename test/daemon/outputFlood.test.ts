/**
 * Cells in two sessions of a real daemon printing far more than any bound, at once. ipykernel sends
 * what a stream buffered between two flushes as one message, so such a print used to reach the
 * daemon as one message of hundreds of megabytes, taken in whole (and copied twice over while
 * decoded) before it could be cut; past V8's longest string it was dropped whole and not counted.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, killDaemon, makeDirs, startDaemon, type DaemonProcess, type Dirs } from "./support/daemon.js";

const MIB = 1024 * 1024;
/** What each cell prints, in MiB, one MiB per write and no flush: far past every bound, and past V8's longest string for one. */
const PRINTED_MIB = [256, 600];
/**
 * The daemon's resident memory may reach this, at its peak and after, with both cells done: its
 * own baseline (about 100 MiB with two kernels) and a few cut outputs. The cells print 856 MiB.
 */
const DAEMON_RSS_BOUND_MIB = 256;
const KERNEL_TEST_MS = 240_000;
/** The marker line a cut text ends with. */
const MARKER_LINE = /\n\[albedo: [^\]\n]* of output dropped: [^\]\n]*\]\n$/;

let dirs: Dirs;
let daemon: DaemonProcess;

beforeAll(async () => {
  dirs = await makeDirs();
  daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"]);
}, 120_000);

afterAll(async () => {
  if (daemon) await killDaemon(daemon, "SIGTERM");
  await dirs?.cleanup();
});

/** VmRSS and VmHWM (peak) of the daemon, in MiB. */
function daemonMemoryMib(): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${daemon.process.pid!}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)![1]);
  return { rss: kib("VmRSS") / 1024, peak: kib("VmHWM") / 1024 };
}

function flood(mib: number): string {
  return ["import sys", "chunk = 'x' * (1024 * 1024)", `for _ in range(${mib}):`, "    sys.stdout.write(chunk)"].join("\n");
}

describe("B D-1 O-3 output is counted as it arrives: huge prints in two sessions at once", () => {
  it(`${PRINTED_MIB.join(" and ")} MiB printed: each answer's dropped_output_bytes is what was printed minus what it kept, and the daemon stays under ${DAEMON_RSS_BOUND_MIB} MiB`, async () => {
    const ids: string[] = [];
    for (const _ of PRINTED_MIB) ids.push((await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body.id as string);
    const answers = await Promise.all(ids.map((id, n) => call(daemon, "POST", `/sessions/${id}/execute`, { code: flood(PRINTED_MIB[n]!) })));
    answers.forEach((answer, n) => {
      expect(answer.body.status, JSON.stringify(answer.body).slice(0, 500)).toBe("ok");
      const texts = (answer.body.outputs as { content: { name?: string; text?: string } }[]).filter((o) => o.content.name === "stdout").map((o) => o.content.text!);
      expect(texts.length).toBeGreaterThan(0);
      for (const text of texts) expect(text).toMatch(MARKER_LINE);
      const kept = texts.reduce((sum, text) => sum + Buffer.byteLength(text.replace(MARKER_LINE, "")), 0);
      expect(answer.body.dropped_output_bytes).toBe(PRINTED_MIB[n]! * MIB - kept);
    });
    const memory = daemonMemoryMib();
    expect(memory.peak).toBeLessThan(DAEMON_RSS_BOUND_MIB);
    expect(memory.rss).toBeLessThan(DAEMON_RSS_BOUND_MIB);
  }, KERNEL_TEST_MS);
});
