/**
 * The session's cell runner, the one way the python tool, albedo's MCP server and the daemon's
 * execute route run a cell: on a real sandboxed kernel, its text (in order, escapes removed,
 * bounded as it arrives), its images checked, its deadline, its interrupt and the interrupt's
 * grace, its progress.
 */
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CELL_INTERRUPT_GRACE_MS, NO_OUTPUT, runCell, type Session } from "../../src/session/index.js";
import { picture } from "../images/fixtures.js";
import { poll } from "../support/poll.js";
import { openSession, sessionDirs, type SessionDirs } from "./fixtures.js";

let dirs: SessionDirs;
let session: Session;

beforeAll(async () => {
  dirs = await sessionDirs();
  await writeFile(join(dirs.workspace, "plot.b64"), (await picture(64, 48)).toString("base64"));
  session = await openSession(dirs);
}, 120_000);

afterAll(async () => {
  await session?.close();
  await dirs?.cleanup();
});

const SHOW = "display({'image/png': open('plot.b64').read(), 'text/plain': '<stand-in>'}, raw=True)";

describe("O-3 P-2 D-2 a cell run to its end", () => {
  it("gathers stdout, stderr, results and the traceback in order without terminal escapes; an image's stand-in is left out and the image checked", async () => {
    const code = ["import sys", "print('\\x1b[31mred\\x1b[0m', flush=True)", "sys.stderr.write('err\\n'); sys.stderr.flush()", SHOW, "40 + 2"].join("\n");
    const seen: string[] = [];
    const cell = await runCell(session.kernel, code, { textBytes: 1000, onOutput: (output) => seen.push(output.header.msg_type) });
    expect(cell).toMatchObject({ status: "ok", stillRunning: false, text: "red\nerr\n42\n", showedImages: true, notes: [] });
    expect(cell.stopped).toBeUndefined();
    expect(cell.reply?.status).toBe("ok");
    expect(cell.images).toHaveLength(1);
    expect(cell.images[0]).toMatchObject({ mime: "image/png", width: 64, height: 48 });
    expect(seen).toEqual(["stream", "stream", "display_data", "execute_result"]);
    const failed = await runCell(session.kernel, "1 / 0", { textBytes: 10_000 });
    expect(failed.status).toBe("error");
    expect(failed.text).toMatch(/ZeroDivisionError/);
    expect(failed.text).not.toContain("\x1b[");
  }, 60_000);

  it("keeps textBytes of the text and counts the rest; without textBytes it gathers none", async () => {
    const cell = await runCell(session.kernel, "print('x' * 5000)", { textBytes: 100 });
    expect(cell.text).toBe("x".repeat(100));
    expect(cell.bytes).toBe(5001);
    const silent = await runCell(session.kernel, "print('y')");
    expect(silent).toMatchObject({ text: "", bytes: 0, status: "ok" });
    expect(NO_OUTPUT).toBe("(no output)");
  }, 60_000);

  it("interrupts a cell past its deadline, still checking its images, and reports its seconds while it runs", async () => {
    const seconds: number[] = [];
    const code = `${SHOW}\nimport time\nprint('started', flush=True)\ntime.sleep(60)`;
    const cell = await runCell(session.kernel, code, { timeoutMs: 2_500, textBytes: 10_000, progress: { everyMs: 1_000, report: (s) => seconds.push(s) } });
    expect(cell).toMatchObject({ stopped: "timed_out", status: "error", stillRunning: false });
    expect(cell.text).toMatch(/^started\n[\s\S]*KeyboardInterrupt/);
    expect(cell.images).toHaveLength(1);
    expect(seconds.length).toBeGreaterThanOrEqual(2);
    expect(seconds[0]).toBeGreaterThanOrEqual(1);
    expect(seconds).toEqual([...seconds].sort((a, b) => a - b));
  }, 60_000);

  it("interrupts a cell when the signal aborts; an interrupted cell's images are not checked", async () => {
    const controller = new AbortController();
    const running = runCell(session.kernel, `${SHOW}\nimport time\nprint('waiting', flush=True)\ntime.sleep(60)`, { signal: controller.signal, textBytes: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    controller.abort();
    const cell = await running;
    expect(cell).toMatchObject({ stopped: "interrupted", status: "error", stillRunning: false, showedImages: true, images: [], notes: [] });
    expect(cell.text).toMatch(/^waiting\n/);
  }, 60_000);

  it(`answers that a cell still runs CELL_INTERRUPT_GRACE_MS (${CELL_INTERRUPT_GRACE_MS} ms) after an interrupt it ignores; the next cell waits for it`, async () => {
    const ready = join(dirs.workspace, "ignoring.ready");
    const code = [
      "import signal, time",
      "previous = signal.signal(signal.SIGINT, signal.SIG_IGN)",
      "try:",
      `    open(${JSON.stringify(ready)}, 'w').close()`,
      "    time.sleep(4)",
      "finally:",
      "    signal.signal(signal.SIGINT, previous)",
      "late = 'after the grace'",
    ].join("\n");
    const controller = new AbortController();
    const running = runCell(session.kernel, code, { signal: controller.signal, textBytes: 10_000 });
    await poll(() => existsSync(ready), { what: "the cell to ignore SIGINT" });
    const aborted = Date.now();
    controller.abort();
    const cell = await running;
    expect(Date.now() - aborted).toBeGreaterThanOrEqual(CELL_INTERRUPT_GRACE_MS - 10);
    expect(cell).toMatchObject({ stopped: "interrupted", stillRunning: true, reply: undefined, status: "error" });
    const next = await runCell(session.kernel, "print(late)", { textBytes: 100 });
    expect(next.text).toBe("after the grace\n");
  }, 60_000);
});
