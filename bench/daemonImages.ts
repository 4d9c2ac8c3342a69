/**
 * The memory a daemon holds over model turns whose python calls show large images, and after.
 * Each turn, a model (a local chat completions server) asks for one python call that shows
 * IMAGES_PER_TURN noise PNGs just under MAX_IMAGE_BYTES, then answers in prose; the request after
 * the call carries the conversation's newest images, as data URLs. The daemon's resident memory is
 * sampled after every turn and then while it idles. No goal: the figures say where the memory goes
 * (the turns' transient copies of their images, collected by V8 once the daemon idles) and what
 * stays.
 */
import { writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import sharp from "sharp";
import { newOperationId } from "../src/operations/index.js";
import { call, killDaemon, makeDirs, outcomeOf, startDaemon, type DaemonProcess } from "../test/daemon/support/daemon.js";
import { processMemoryMb } from "./pss.js";

/** Turns run, and images each turn's python call shows. */
const TURNS = 6;
const IMAGES_PER_TURN = 4;
/** Noise compresses badly: 1620 × 1000 RGB is a PNG of about 5.1 MB, just under MAX_IMAGE_BYTES (5 MiB) and under the scaling edge. */
const NOISE_WIDTH_PX = 1620;
const NOISE_HEIGHT_PX = 1000;
/** How long the idle daemon is watched after the turns, and how often. */
const IDLE_MS = 40_000;
const IDLE_SAMPLE_MS = 5_000;

/** A noise PNG's base64, different each call. */
async function noisePng(): Promise<string> {
  const pixels = Buffer.alloc(NOISE_WIDTH_PX * NOISE_HEIGHT_PX * 3);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (Math.random() * 256) | 0;
  const png = await sharp(pixels, { raw: { width: NOISE_WIDTH_PX, height: NOISE_HEIGHT_PX, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer();
  return png.toString("base64");
}

/** A chat completions server whose odd calls ask for `code(turn)` in a python call and whose even calls answer "done". Requests are read and dropped (they carry tens of megabytes). */
async function scriptedModel(code: (turn: number) => string): Promise<{ baseUrl: string; close(): Promise<void> }> {
  let calls = 0;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const answer = (res: ServerResponse) => {
    const turn = Math.floor(calls / 2);
    const asks = calls % 2 === 0;
    calls += 1;
    res.writeHead(200, { "content-type": "text/event-stream" });
    if (asks) res.write(chunk({ tool_calls: [{ index: 0, id: `call_${calls}`, type: "function", function: { name: "python", arguments: JSON.stringify({ code: code(turn) }) } }] }));
    else res.write(chunk({ content: "done" }));
    res.end(`${chunk({}, asks ? "tool_calls" : "stop")}data: [DONE]\n\n`);
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on("end", () => answer(res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

export async function benchDaemonImageMemory(): Promise<Record<string, unknown>> {
  const dirs = await makeDirs();
  const files = IMAGES_PER_TURN * 2;
  for (let n = 0; n < files; n++) await writeFile(join(dirs.workspace, `noise${n}.b64`), await noisePng());
  const show = (turn: number) => ["from IPython.display import display", ...Array.from({ length: IMAGES_PER_TURN }, (_, i) => `display({'image/png': open('noise${(turn * IMAGES_PER_TURN + i) % files}.b64').read()}, raw=True)`)].join("\n");
  const model = await scriptedModel(show);
  let daemon: DaemonProcess | undefined;
  try {
    // A context budget no conversation here reaches: no compaction, every image in context up to MAX_IMAGES_IN_CONTEXT.
    const settings = { model: { provider: "openai", base_url: model.baseUrl, name: "fake", mode: "code", context_tokens: 16 * 1024 * 1024 } };
    await writeFile(join(dirs.state, "settings.json"), JSON.stringify(settings), { mode: 0o600 });
    daemon = await startDaemon(dirs, ["--listen", "127.0.0.1:0", "--pool", "0"]);
    const pid = daemon.process.pid!;
    const session = (await call(daemon, "POST", "/sessions", { workspace: dirs.workspace })).body.id as string;
    const baseline = processMemoryMb(pid);
    const afterTurns: number[] = [];
    for (let turn = 0; turn < TURNS; turn++) {
      const admitted = await call(daemon, "POST", `/sessions/${session}/events`, { operation_id: newOperationId(), type: "message", text: `turn ${turn}` });
      const ended = await outcomeOf(daemon, admitted.body.operation_id as string);
      if ((ended.outcome as { result?: string } | undefined)?.result !== "completed") throw new Error(`turn ${turn} did not complete: ${JSON.stringify(ended).slice(0, 300)}`);
      afterTurns.push(processMemoryMb(pid).rss);
    }
    const idle: number[] = [];
    for (let waited = 0; waited < IDLE_MS; waited += IDLE_SAMPLE_MS) {
      await new Promise((resolve) => setTimeout(resolve, IDLE_SAMPLE_MS));
      idle.push(processMemoryMb(pid).rss);
    }
    return {
      turns: TURNS,
      images_per_turn: IMAGES_PER_TURN,
      baseline_rss_mb: baseline.rss,
      rss_after_each_turn_mb: afterTurns,
      peak_rss_mb: processMemoryMb(pid).peak,
      [`idle_rss_mb_every_${IDLE_SAMPLE_MS / 1000}_s`]: idle,
    };
  } finally {
    if (daemon) await killDaemon(daemon, "SIGTERM");
    await model.close();
    await dirs.cleanup();
  }
}
