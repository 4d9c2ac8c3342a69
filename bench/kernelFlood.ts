/**
 * What a daemon holds while kernels flood it: FLOODERS sandboxed kernels each send FLOOD_MESSAGES
 * messages just under MAX_KERNEL_MESSAGE_BYTES straight on their iopub socket, all at once, beside
 * a quiet session that runs one cell meanwhile. The daemon's peak resident memory is set against
 * MAX_KERNEL_BYTES_IN_FLIGHT (the process-wide budget; the kernels holding the most past it are
 * cut); with it, how many kernels were cut and whether the quiet session answered. No goal:
 * test/daemon/kernelMessages.test.ts asserts the bound; this says where the peak lies.
 */
import { processMemoryMb } from "./pss.js";
import { MAX_KERNEL_BYTES_IN_FLIGHT, MAX_KERNEL_MESSAGE_BYTES } from "../src/kernel/limits.js";
import { call, killDaemon, makeDirs, startDaemon, type DaemonProcess } from "../test/daemon/support/daemon.js";

const MIB = 1024 * 1024;
/** Kernels flooding at once, and what each sends. */
const FLOODERS = 8;
const FLOOD_MESSAGES = 8;
const FLOOD_MIB = MAX_KERNEL_MESSAGE_BYTES / MIB - 4;

/** A cell sending `count` display_data messages of `mib` MiB on the kernel's own iopub socket (one shared buffer). */
function flood(mib: number, count: number): string {
  return [
    "kernel = get_ipython().kernel",
    `big = 'x' * (${mib} * 1024 * 1024)`,
    "frames = kernel.session.serialize(kernel.session.msg('display_data', {'data': {'text/plain': big}, 'metadata': {}}, parent=kernel.get_parent('shell')))",
    "del big",
    `for _ in range(${count}): kernel.iopub_socket.send_multipart(frames, copy=False)`,
  ].join("\n");
}

export async function benchKernelFlood(): Promise<Record<string, unknown>> {
  const dirs = await makeDirs();
  let daemon: DaemonProcess | undefined;
  try {
    daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"]);
    const pid = daemon.process.pid!;
    const ids: string[] = [];
    for (let n = 0; n < FLOODERS + 1; n++) ids.push((await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body.id as string);
    const [quiet, ...flooding] = ids as [string, ...string[]];
    const baseline = processMemoryMb(pid);
    const floods = Promise.all(flooding.map((id) => call(daemon!, "POST", `/sessions/${id}/execute`, { code: flood(FLOOD_MIB, FLOOD_MESSAGES) })));
    const quietAnswer = await call(daemon, "POST", `/sessions/${quiet}/execute`, { code: "print(6 * 7)" });
    const answers = await floods;
    const peak = processMemoryMb(pid).peak;
    const limitMb = MAX_KERNEL_BYTES_IN_FLIGHT / MIB;
    const growth = peak - baseline.rss;
    return {
      flooders: FLOODERS,
      messages_each: FLOOD_MESSAGES,
      message_mib: FLOOD_MIB,
      baseline_rss_mb: baseline.rss,
      peak_rss_mb: peak,
      peak_growth_mb: growth,
      budget_mb: limitMb,
      cut: answers.filter((answer) => JSON.stringify(answer.body).includes("MAX_KERNEL_BYTES_IN_FLIGHT")).length,
      quiet_answered: JSON.stringify(quietAnswer.body.outputs ?? []).includes("42"),
    };
  } finally {
    if (daemon) await killDaemon(daemon, "SIGTERM");
    await dirs.cleanup();
  }
}
