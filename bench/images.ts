/**
 * The images step of one execution: a cell's display bundle carrying a 3000 × 2000 PNG, collected,
 * checked (magic number, header, a whole decode), scaled to MAX_IMAGE_EDGE_PX and attached to the
 * next chat completions request (the user message with its data URL, serialised as the request
 * body), as the runtime does for every image a cell shows. The baseline is sharp decoding the same PNG and nothing else,
 * in alternating batches: the floor any check that reads every pixel pays.
 */
import { performance } from "node:perf_hooks";
import sharp from "sharp";
import { collectImages, MAX_IMAGE_EDGE_PX } from "../src/images/index.js";
import { humanSize } from "../src/json/index.js";
import { chatCompletionParams } from "../src/model/index.js";
import { imagesMessage } from "../src/turns/index.js";
import { limitGoal } from "./goals.js";
import { median, percentile, round } from "./stats.js";

const WIDTH_PX = 3000;
const HEIGHT_PX = 2000;
/** Batches of each kind, alternating, and steps per batch; the first batch of each is a warm-up. */
const BATCHES = 8;
const PER_BATCH = 5;
/** Goal: the bound on the runtime's work for one large plot. */
const IMAGE_STEP_TARGET_MS = 30;
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

/** Runs the benchmark; the median step in milliseconds held to IMAGE_STEP_TARGET_MS, and sharp's decode alone beside it. */
export async function benchImages(): Promise<Record<string, unknown>> {
  const png = await barChart(WIDTH_PX, HEIGHT_PX);
  const outputs = [{ data: { "text/plain": "<Figure size 3000x2000>", "image/png": png.toString("base64") }, metadata: {} }];
  const steps: number[] = [];
  const decodes: number[] = [];
  const attaches: number[] = [];
  let kept = "";
  let body = "";
  for (let batch = 0; batch < BATCHES; batch++) {
    for (let i = 0; i < PER_BATCH; i++) {
      const began = performance.now();
      const { images } = await collectImages(outputs);
      const collected = performance.now();
      const carrier = imagesMessage([{ callId: "call_bench", images }]);
      if (carrier === undefined) throw new Error("the bench image was not attached");
      body = JSON.stringify(chatCompletionParams("bench", { messages: [carrier], tools: [], signal: NEVER_ABORTED }));
      const ended = performance.now();
      if (batch > 0) {
        steps.push(ended - began);
        attaches.push(ended - collected);
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
      request_body: humanSize(body.length),
      decode_only_median_ms: round(decode),
      ratio_to_decode: round(step / decode),
      ...limitGoal(step, IMAGE_STEP_TARGET_MS),
    },
  };
}
