import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import type { ExecuteOutput } from "../../src/kernel/index.js";
import { DROPPED_BYTES_METADATA, MAX_OUTPUT_MESSAGE_BYTES, STREAM_TEXT_BYTES, outputPayloadBytes } from "../../src/kernel/index.js";
import { boundOutput } from "../../src/kernel/outputs.js";
import { jsonBytes } from "../../src/json/index.js";
import { checkImage, MAX_IMAGE_BYTES } from "../../src/images/index.js";
import { KERNEL_DIR, PYTHON } from "../rpc/helpers.js";

function stream(text: string, metadata: Record<string, unknown> = {}): ExecuteOutput {
  return { header: { msg_type: "stream" }, parent_header: {}, metadata, content: { name: "stdout", text } } as unknown as ExecuteOutput;
}

describe("B K-2 a stream's text the kernel left out is counted and marked as the runtime's own cut would be", () => {
  it("marks a text the kernel cut with what it left out, counts it as dropped, and carries the text's bytes", () => {
    const text = "x".repeat(STREAM_TEXT_BYTES);
    const { output, bytes, droppedBytes } = boundOutput(stream(text, { [DROPPED_BYTES_METADATA]: 5 * 1024 * 1024 }));
    const shown = (output.content as { text: string }).text;
    expect(shown).toBe(`${text}\n[albedo: 5.0 MB of output dropped: more than MAX_OUTPUT_MESSAGE_BYTES (2.0 MB) in one output]\n`);
    expect(droppedBytes).toBe(5 * 1024 * 1024);
    expect(bytes).toBe(jsonBytes(output.content));
    expect(bytes).toBeLessThanOrEqual(MAX_OUTPUT_MESSAGE_BYTES);
    expect(outputPayloadBytes(output)).toBe(STREAM_TEXT_BYTES);
  });

  it("adds what the kernel left out to what the runtime cuts itself, in one marker", () => {
    const text = "\u0001".repeat(STREAM_TEXT_BYTES);
    const { output, droppedBytes } = boundOutput(stream(text, { [DROPPED_BYTES_METADATA]: 1000 }));
    const shown = (output.content as { text: string }).text;
    const cut = droppedBytes - 1000;
    expect(cut).toBeGreaterThan(0);
    expect(jsonBytes(output.content)).toBeLessThanOrEqual(MAX_OUTPUT_MESSAGE_BYTES);
    expect(outputPayloadBytes(output)).toBe(STREAM_TEXT_BYTES - cut);
    expect(shown.match(/\[albedo: [^\]]*\]/g)).toHaveLength(1);
  });

  it("ignores a count that is not a positive safe integer, and one on anything but a stream", () => {
    for (const bad of [-1, 1.5, "9", Number.MAX_VALUE]) {
      const received = stream("hi", { [DROPPED_BYTES_METADATA]: bad });
      expect(boundOutput(received)).toEqual({ output: received, bytes: jsonBytes(received.content), droppedBytes: 0 });
    }
    const display = { ...stream("hi", { [DROPPED_BYTES_METADATA]: 10 }), header: { msg_type: "display_data" } } as unknown as ExecuteOutput;
    expect(boundOutput(display).droppedBytes).toBe(0);
  });
});

describe("B K-2 an albedo kernel's stream messages carry at most STREAM_TEXT_BYTES of text", () => {
  it("cap_stream keeps a prefix within STREAM_TEXT_BYTES, on a character boundary, and counts every other byte", () => {
    const code = [
      "import json",
      "from albedo._streams import cap_stream",
      "from albedo._contract import STREAM_TEXT_BYTES as C",
      "out = []",
      "for t in ['x' * (C + 10), 'é' * C, 'a' + '€' * C, 'short', 'x' * C]:",
      "    m = cap_stream({'content': {'text': t}, 'metadata': {}})",
      "    k = m['content']['text']",
      "    out.append([len(k.encode()), m['metadata'].get('albedo_dropped_bytes', 0), len(t.encode()), t.startswith(k)])",
      "print(json.dumps(out))",
    ].join("\n");
    const run = spawnSync(PYTHON, ["-c", code], { env: { ...process.env, PYTHONPATH: KERNEL_DIR }, encoding: "utf8" });
    expect(run.stderr).toBe("");
    const rows = JSON.parse(run.stdout) as [number, number, number, boolean][];
    for (const [kept, dropped, total, prefix] of rows) {
      expect(kept).toBeLessThanOrEqual(STREAM_TEXT_BYTES);
      expect(kept + dropped).toBe(total);
      expect(prefix).toBe(true);
    }
    expect(rows.map(([, dropped]) => dropped > 0)).toEqual([true, true, true, false, false]);
  });
});

function displayData(data: Record<string, unknown>): ExecuteOutput {
  return { header: { msg_type: "display_data" }, parent_header: {}, metadata: {}, content: { data, metadata: {} } } as unknown as ExecuteOutput;
}

describe("I-1 B a display bundle's images are not cut with the rest of the output", () => {
  /** Base64 that decodes to `bytes` bytes (not an image: the bound reads its size only). */
  const base64Of = (bytes: number) => Buffer.alloc(bytes, 7).toString("base64");

  it("keeps an image representation whole up to MAX_IMAGE_BYTES while the bundle's other parts are cut to MAX_OUTPUT_MESSAGE_BYTES", () => {
    const image = base64Of(MAX_IMAGE_BYTES);
    const { output, bytes, droppedBytes } = boundOutput(displayData({ "text/plain": "p".repeat(3 * 1024 * 1024), "image/png": image }));
    const data = (output.content as { data: Record<string, string> }).data;
    expect(Object.keys(data)).toEqual(["text/plain", "image/png"]);
    expect(data["image/png"]).toBe(image);
    expect(data["text/plain"]).toMatch(/\[albedo: [\d.]+ MB of output dropped: more than MAX_OUTPUT_MESSAGE_BYTES \(2\.0 MB\) in one output\]\n$/);
    expect(jsonBytes(data["text/plain"])).toBeLessThanOrEqual(MAX_OUTPUT_MESSAGE_BYTES);
    expect(bytes).toBe(jsonBytes(output.content));
    expect(droppedBytes).toBeGreaterThan(1024 * 1024);
  });

  it("puts a note in place of one past MAX_IMAGE_BYTES, which the image check reports naming the bound", async () => {
    const { output, droppedBytes } = boundOutput(displayData({ "image/jpeg": base64Of(MAX_IMAGE_BYTES + 4), "image/svg+xml": "<svg/>" }));
    const data = (output.content as { data: Record<string, string> }).data;
    expect(data["image/jpeg"]).toBe(`[albedo: an image of ${MAX_IMAGE_BYTES + 4} bytes dropped: over MAX_IMAGE_BYTES]`);
    expect(data["image/svg+xml"]).toBe("<svg/>");
    expect(droppedBytes).toBe(base64Of(MAX_IMAGE_BYTES + 4).length);
    expect(await checkImage("image/jpeg", data["image/jpeg"]!)).toEqual({ ok: false, reason: "too_large", note: "5.0 MB is over MAX_IMAGE_BYTES (5.0 MB)" });
  });
});
