import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_EXECUTE_OUTPUT_BYTES, MAX_STREAM_MESSAGE_BYTES } from "../../src/daemon/index.js";
import { MAX_OUTPUT_MESSAGE_BYTES } from "../../src/kernel/index.js";
import { jsonBytes } from "../../src/json/index.js";
import { call, killDaemon, makeDirs, openStream, startDaemon, type DaemonProcess, type Dirs, type StreamClient } from "./support/daemon.js";
import { poll } from "../support/poll.js";

let dirs: Dirs;
let daemon: DaemonProcess;
let sessionId: string;
let stream: StreamClient;
/** Sizes of the raw stream messages, as sent. */
const messageSizes: number[] = [];

const MIB = 1024 * 1024;
/** A marker a cut output ends with. */
const CUT_MARKER = /\[albedo: [\d.]+ MB of output dropped: more than MAX_OUTPUT_MESSAGE_BYTES \(2\.0 MB\) in one output\]\n$/;
/**
 * The daemon's V8 heap limit in these tests (NODE_OPTIONS --max-old-space-size), below the 320 MB
 * the flooding cell prints: a daemon that kept what it dropped runs out of heap and dies. What it
 * may hold: 16 MB of kept outputs, its own baseline, and the messages being cut, each as text and
 * parsed: the failed cell's 20 MB error arrives on iopub and, whole again, in its reply on shell,
 * and the two sockets' messages may be decoded in the same turn. Measured live after a full
 * collection: 122 MB alone, 199 MB with two other flooding test files beside it (192 was too tight).
 */
const DAEMON_HEAP_MIB = 256;
/** Room for the one marker output an answer ends with when it left outputs out. */
const ANSWER_MARKER_BYTES = 1024;

beforeAll(async () => {
  dirs = await makeDirs();
  daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"], { NODE_OPTIONS: `--max-old-space-size=${DAEMON_HEAP_MIB}` });
  sessionId = (await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body.id;
  stream = await openStream(daemon, sessionId);
  stream.ws.on("message", (data: Buffer) => messageSizes.push(data.length));
}, 120_000);

afterAll(async () => {
  await stream?.close();
  if (daemon) await killDaemon(daemon, "SIGTERM");
  await dirs?.cleanup();
});

type Output = { msg_type: string; content: Record<string, unknown> };

function streamedOutputs(executionId: string): Output[] {
  return stream.events.filter((event) => event.type === "output" && event.execution_id === executionId) as unknown as Output[];
}

describe("D-1 B outputs are bounded in the daemon", () => {
  it("cuts each huge output (stream, display_data bundle, error traceback) to MAX_OUTPUT_MESSAGE_BYTES with a marker, and holds far less than the kernel printed", { timeout: 180_000 }, async () => {
    const code = [
      "import sys",
      "from IPython.display import display",
      "big = 'x' * (30 * 1024 * 1024)",
      "for _ in range(8):",
      "    sys.stdout.write(big)",
      "    sys.stdout.flush()",
      "display({'text/plain': 'p' * (20 * 1024 * 1024), 'text/html': 'h' * (20 * 1024 * 1024)}, raw=True)",
      "raise ValueError('z' * (20 * 1024 * 1024))",
    ].join("\n");
    const answer = await call(daemon, "POST", `/sessions/${sessionId}/execute`, { code, execution_id: "flood" });
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe("error");
    const kept = answer.body.outputs as Output[];
    for (const output of kept) expect(jsonBytes(output.content)).toBeLessThanOrEqual(MAX_OUTPUT_MESSAGE_BYTES);
    expect(kept.reduce((sum, output) => sum + jsonBytes(output.content), 0)).toBeLessThanOrEqual(MAX_EXECUTE_OUTPUT_BYTES + ANSWER_MARKER_BYTES);
    expect(answer.body.dropped_output_bytes).toBeGreaterThan(300 * MIB);

    await poll(() => streamedOutputs("flood").some((output) => output.msg_type === "error"), { what: "the error on the stream" });
    const outputs = streamedOutputs("flood");
    for (const output of outputs) expect(jsonBytes(output.content)).toBeLessThanOrEqual(MAX_OUTPUT_MESSAGE_BYTES);
    const texts = outputs.filter((output) => output.msg_type === "stream").map((output) => output.content.text as string);
    expect(texts.length).toBeGreaterThanOrEqual(8);
    for (const text of texts) expect(text).toMatch(CUT_MARKER);
    const display = outputs.find((output) => output.msg_type === "display_data")!.content.data as Record<string, string>;
    expect(display["text/plain"]).toMatch(CUT_MARKER);
    expect(display["text/html"]).toMatch(CUT_MARKER);
    const error = outputs.find((output) => output.msg_type === "error")!.content;
    expect(error.ename).toBe("ValueError");
    expect(error.evalue).toMatch(CUT_MARKER);
    expect(JSON.stringify(error.traceback)).toContain("[albedo: ");
    expect(Math.max(...messageSizes)).toBeLessThanOrEqual(MAX_STREAM_MESSAGE_BYTES);
    expect(stream.ws.readyState).toBe(stream.ws.OPEN);
    expect((await call(daemon, "GET", "/health")).status).toBe(200);
  });

  it("keeps at most MAX_EXECUTE_OUTPUT_BYTES in the answer and says how much went; the stream carries every output", { timeout: 180_000 }, async () => {
    const count = 24;
    const code = ["import sys", "line = 'y' * (1024 * 1024 - 1) + '\\n'", `for _ in range(${count}):`, "    sys.stdout.write(line)", "    sys.stdout.flush()"].join("\n");
    const answer = await call(daemon, "POST", `/sessions/${sessionId}/execute`, { code, execution_id: "many" });
    expect(answer.status).toBe(200);
    const outputs = answer.body.outputs as Output[];
    expect(outputs.reduce((sum, output) => sum + jsonBytes(output.content), 0)).toBeLessThanOrEqual(MAX_EXECUTE_OUTPUT_BYTES + ANSWER_MARKER_BYTES);
    expect(answer.body.dropped_outputs).toBeGreaterThan(0);
    expect(answer.body.dropped_output_bytes).toBeGreaterThan(4 * MIB);
    expect(outputs.at(-1)).toEqual({
      msg_type: "stream",
      content: { name: "stderr", text: expect.stringMatching(/^\[albedo: [\d.]+ MB of output dropped: more than MAX_EXECUTE_OUTPUT_BYTES \(16\.0 MB\) in one execute answer; its \d+ later outputs went to the stream only\]\n$/) },
    });
    const streamedText = () => streamedOutputs("many").reduce((sum, output) => sum + (output.content.text as string).length, 0);
    await poll(() => streamedText() === count * MIB, { what: "every output on the stream" });
  });
});
