/**
 * The images step of one execution: a cell's display bundle carrying a 3000 × 2000 PNG, collected,
 * checked (magic number, header, a whole decode), scaled to MAX_IMAGE_EDGE_PX and attached to the
 * next chat completions request (sent in the user message after the tool result as a data URL,
 * serialised as the request body), as the runtime does for every image a cell shows. Beside it, no
 * goal: what a later turn's first request pays to read the image back from the session's store by
 * its reference (the file read, its hash checked, base64). The baseline is sharp decoding the same PNG and nothing else,
 * in alternating batches: the floor any check that reads every pixel pays.
 *
 * Then the memory a conversation holds as its cells show images: turns of a real session, each
 * with one python call whose cell displays a different PNG, measured after as many turns as a
 * request carries images (MAX_IMAGES_IN_CONTEXT) and again after CONVERSATION_IMAGES. The
 * conversation keeps references to the session's store, and the bytes only of images the store
 * refused (past its quota), which the model still receives.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import sharp from "sharp";
import { collectImages, ImageStore, MAX_IMAGE_EDGE_PX, MAX_SESSION_IMAGE_BYTES } from "../src/images/index.js";
import { humanSize } from "../src/json/index.js";
import { chatCompletionParams, type ModelAdapter, type ModelReply, type ModelRequest } from "../src/model/index.js";
import { installDir } from "../src/platform/index.js";
import { Session } from "../src/session/index.js";
import { EMPTY_CONVERSATION, loadPrompts, MAX_IMAGES_IN_CONTEXT, resultImages, runTurn, withImageBytes, type ConversationImage, type ConversationState } from "../src/turns/index.js";
import { limitGoal } from "./goals.js";
import { median, percentile, round } from "./stats.js";

const WIDTH_PX = 3000;
const HEIGHT_PX = 2000;
/** Batches of each kind, alternating, and steps per batch; the first batch of each is a warm-up. */
const BATCHES = 8;
const PER_BATCH = 5;
/** Goal: the bound on the runtime's work for one large plot. */
const IMAGE_STEP_TARGET_MS = 30;
/** Turns in the conversation whose memory is measured, one image each. */
const CONVERSATION_IMAGES = 50;
/**
 * Goal: what the conversation holds after CONVERSATION_IMAGES image turns, the bytes of images the
 * store refused aside (at most MAX_IMAGES_IN_CONTEXT, reported beside it): its text and references.
 */
const CONVERSATION_OWN_LIMIT_MB = 1;
/** Each turn's image: noise, so it compresses badly and no two are alike (about 1.4 MB as PNG). */
const NOISE_WIDTH_PX = 800;
const NOISE_HEIGHT_PX = 600;
/** The request the image is attached to is built, not sent. */
const NEVER_ABORTED = new AbortController().signal;

/** A bar chart on a white ground with grid lines: flat colour and sharp edges compress like a real plot. */
async function barChart(width: number, height: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3, 255);
  const paint = (x0: number, y0: number, x1: number, y1: number, rgb: readonly number[]) => {
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) pixels.set(rgb, (y * width + x) * 3);
  };
  for (let y = 0; y < height; y += Math.floor(height / 10)) paint(0, y, width, y + 2, [210, 210, 210]);
  const bars = 12;
  const slot = Math.floor(width / bars);
  for (let bar = 0; bar < bars; bar++) {
    const top = Math.floor(height * (0.15 + 0.6 * Math.abs(Math.sin(bar + 1))));
    paint(bar * slot + slot / 5, top, (bar + 1) * slot - slot / 5, height, [31 + bar * 15, 119, 180 - bar * 10]);
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } }).png().toBuffer();
}

/**
 * sharp decoding every pixel of `png` and keeping one row: libvips reads a PNG top to bottom, so the
 * last row costs the whole decode, while an 18 MB raw copy would time the allocator too.
 */
function decodeOnly(png: Buffer): Promise<Buffer> {
  return sharp(png).extract({ left: 0, top: HEIGHT_PX - 1, width: WIDTH_PX, height: 1 }).raw().toBuffer();
}

/** A PNG of seeded noise: a xorshift stream, so image `seed` is the same on every run and unlike the others. */
function noisePng(seed: number): Promise<Buffer> {
  const pixels = Buffer.alloc(NOISE_WIDTH_PX * NOISE_HEIGHT_PX * 3);
  let state = (seed + 1) * 2654435761 >>> 0;
  for (let i = 0; i < pixels.length; i++) {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    pixels[i] = state & 0xff;
  }
  return sharp(pixels, { raw: { width: NOISE_WIDTH_PX, height: NOISE_HEIGHT_PX, channels: 3 } }).png().toBuffer();
}

/** A model that calls python once per turn (the cell showing that turn's image) and then answers in prose. */
class ImageTurnsModel implements ModelAdapter {
  private turn = 0;
  private called = false;

  async complete(_request: ModelRequest): Promise<ModelReply> {
    if (this.called) {
      this.called = false;
      this.turn += 1;
      return { text: "seen", toolCalls: [], finishReason: "stop" };
    }
    this.called = true;
    const code = `from IPython.display import Image, display\ndisplay(Image(filename="img/${this.turn}.png"))`;
    return { text: "", toolCalls: [{ id: `c${this.turn}`, name: "python", arguments: JSON.stringify({ code }) }], finishReason: "tool_calls" };
  }

  describe() {
    return { provider: "bench", model: "scripted", mode: "tool" as const, contextTokens: 10_000_000 };
  }
}

/**
 * Heap and external memory one process holds, in MiB, after GC when exposed. External counts
 * buffers and Node's large base64 strings, which live outside the heap.
 */
async function heldMb(): Promise<number> {
  const collect = (globalThis as { gc?: () => void }).gc;
  // Twice, a turn of the loop apart: external memory is given back by callbacks after a collection.
  for (let i = 0; i < 2; i++) {
    collect?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const usage = process.memoryUsage();
  return (usage.heapUsed + usage.external) / 2 ** 20;
}

/** The conversation serialised, in MiB, as a store saves it. */
function stateMb(state: ConversationState): number {
  return Buffer.byteLength(JSON.stringify(state)) / 2 ** 20;
}

/** The images the conversation's messages carry: a user message's, a tool result's still sent. */
function carriedImages(state: ConversationState): ConversationImage[] {
  return state.turns.flatMap((turn) => turn.messages).flatMap((message) => (message.role === "user" ? (message.images ?? []) : message.role === "tool" ? (message.images?.sent ?? []) : []));
}

/**
 * What a conversation of CONVERSATION_IMAGES turns, one image each, holds: the heap and buffers
 * grown, after MAX_IMAGES_IN_CONTEXT turns and after all of them, the images carried, and what
 * the session's store kept on disk. Bounded by the quota and the newest-N rule means the second
 * number stays near the first.
 */
export async function benchImageConversation(): Promise<Record<string, unknown>> {
  const root = await mkdtemp(join(tmpdir(), "alb-bench-images-"));
  const dirs = { workspace: join(root, "ws"), home: join(root, "home"), state: join(root, "st") };
  await Promise.all(Object.values(dirs).map((dir) => mkdir(dir)));
  await mkdir(join(dirs.workspace, "img"));
  let pngBytes = 0;
  for (let i = 0; i < CONVERSATION_IMAGES; i++) {
    const png = await noisePng(i);
    pngBytes += png.length;
    await writeFile(join(dirs.workspace, "img", `${i}.png`), png);
  }
  const session = await Session.open({ workspace: dirs.workspace, home: dirs.home, stateDir: dirs.state, env: { ...process.env, HOME: dirs.home } });
  try {
    const setup = { adapter: new ImageTurnsModel(), mode: "tool" as const, contextTokens: 10_000_000, prompts: loadPrompts(installDir()), host: session, emit: () => undefined };
    const before = await heldMb();
    let state: ConversationState = EMPTY_CONVERSATION;
    let atBound = { held: 0, state: 0 };
    for (let i = 0; i < CONVERSATION_IMAGES; i++) {
      state = (await runTurn({ turnId: `t${i}`, visibleText: `plot ${i}`, modelInput: `plot ${i}` }, state, setup, new AbortController().signal)).state;
      if (i + 1 === MAX_IMAGES_IN_CONTEXT) atBound = { held: (await heldMb()) - before, state: stateMb(state) };
    }
    const atEnd = { held: (await heldMb()) - before, state: stateMb(state) };
    const carried = carriedImages(state);
    const inline = carried.flatMap((image) => ("data" in image ? [image] : []));
    const base64 = inline.reduce((chars, image) => chars + image.data.length, 0) / 2 ** 20;
    return {
      turns: state.turns.length,
      image: `${NOISE_WIDTH_PX}×${NOISE_HEIGHT_PX} PNG noise, ${humanSize(pngBytes / CONVERSATION_IMAGES)} each`,
      images_carried: carried.length,
      images_carried_inline: inline.length,
      carried_base64_mb: round(base64),
      [`state_mb_after_${MAX_IMAGES_IN_CONTEXT}`]: round(atBound.state),
      [`state_mb_after_${CONVERSATION_IMAGES}`]: round(atEnd.state),
      [`own_state_mb_after_${CONVERSATION_IMAGES}`]: round(atEnd.state - base64),
      [`process_mb_after_${MAX_IMAGES_IN_CONTEXT}`]: round(atBound.held),
      [`process_mb_after_${CONVERSATION_IMAGES}`]: round(atEnd.held),
      store_mb: round(session.images.usedBytes / 2 ** 20),
      store_quota_mb: round(MAX_SESSION_IMAGE_BYTES / 2 ** 20),
      note: "state: the conversation serialised (what it holds and what a store saves); own: the same without the base64 of images the store refused past its quota (carried inline, so the model still receives them); process: heap used + external grown since the first turn (noisy); the conversation carries the newest MAX_IMAGES_IN_CONTEXT images by reference; ratio: own state after all over CONVERSATION_OWN_LIMIT_MB",
      ...limitGoal(atEnd.state - base64, CONVERSATION_OWN_LIMIT_MB),
    };
  } finally {
    await session.close();
    await rm(root, { recursive: true, force: true });
  }
}

/** Runs the benchmark; the median step in milliseconds held to IMAGE_STEP_TARGET_MS, and sharp's decode alone beside it. */
export async function benchImages(): Promise<Record<string, unknown>> {
  const png = await barChart(WIDTH_PX, HEIGHT_PX);
  const outputs = [{ data: { "text/plain": "<Figure size 3000x2000>", "image/png": png.toString("base64") }, metadata: {} }];
  const stateDir = await mkdtemp(join(tmpdir(), "alb-bench-store-"));
  try {
    // Kept for people before the model's request, as the python tool does, and not timed here as before.
    const store = new ImageStore(stateDir);
    const refs = (await store.keepAll((await collectImages(outputs)).images)).each;
    if (refs[0] === undefined) throw new Error("the bench image was not kept in the store");
    const steps: number[] = [];
    const decodes: number[] = [];
    const attaches: number[] = [];
    const readBacks: number[] = [];
    let kept = "";
    let body = "";
    for (let batch = 0; batch < BATCHES; batch++) {
      for (let i = 0; i < PER_BATCH; i++) {
        const began = performance.now();
        const { images } = await collectImages(outputs);
        const collected = performance.now();
        // The step's next request takes the image's bytes from the result, as the turn does.
        const shown = resultImages(images, refs);
        const result = { role: "tool" as const, tool_call_id: "call_bench", content: "1 image follows in the next message.", images: shown.images };
        const messages = await withImageBytes([result], store, new Map(shown.bytes));
        body = JSON.stringify(chatCompletionParams("bench", { messages, tools: [], signal: NEVER_ABORTED }));
        const ended = performance.now();
        if (!body.includes("data:image/png;base64,")) throw new Error("the bench image was not attached");
        // A later turn's first request reads it back from the store by its reference (not part of the step).
        const reread = await withImageBytes([result], store, new Map());
        const readBack = performance.now() - ended;
        const back = reread[0];
        if (back?.role !== "tool" || back.images?.sent.length !== 1) throw new Error("the bench image was not read back from the store");
        if (batch > 0) {
          steps.push(ended - began);
          attaches.push(ended - collected);
          readBacks.push(readBack);
        }
        const image = images[0];
        if (image === undefined || Math.max(image.width, image.height) !== MAX_IMAGE_EDGE_PX) throw new Error("the bench image was not kept and scaled");
        kept = `${image.width}×${image.height} PNG, ${humanSize(image.bytes.length)}`;
      }
      for (let i = 0; i < PER_BATCH; i++) {
        const began = performance.now();
        await decodeOnly(png);
        if (batch > 0) decodes.push(performance.now() - began);
      }
    }
    const step = median(steps);
    const decode = median(decodes);
    return {
      step_ms: {
        image: `${WIDTH_PX}×${HEIGHT_PX} PNG, ${humanSize(png.length)} → ${kept}`,
        median_ms: round(step),
        p95_ms: round(percentile(steps, 95)),
        attach_median_ms: round(median(attaches)),
        read_back_median_ms: round(median(readBacks)),
        request_body: humanSize(body.length),
        decode_only_median_ms: round(decode),
        ratio_to_decode: round(step / decode),
        ...limitGoal(step, IMAGE_STEP_TARGET_MS),
      },
    };
  } finally {
    await rm(stateDir, { recursive: true, force: true });
  }
}
