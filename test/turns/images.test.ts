/**
 * A cell's images on their way to the model (I-2) and into the transcript (I-3): a real sandboxed
 * kernel shows them, the real OpenAI client sends them to the local OpenAI-compatible server,
 * which records the image parts it receives. Tool messages carry text only, so the tool result
 * says how many images follow and a user message after the step's results carries them.
 */
import { readFileSync, statSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { IMAGES_DIR, MAX_IMAGE_EDGE_PX, MAX_IMAGES_PER_EXECUTION } from "../../src/images/index.js";
import type { ModelAdapter } from "../../src/model/index.js";
import { installDir } from "../../src/platform/index.js";
import type { Session } from "../../src/session/index.js";
import { loadPrompts } from "../../src/turns/context.js";
import { EMPTY_CONVERSATION, type ConversationState } from "../../src/turns/conversation.js";
import { ImageRefusal } from "../../src/turns/images.js";
import { MAX_IMAGES_IN_CONTEXT } from "../../src/turns/limits.js";
import type { TranscriptRow } from "../../src/turns/rows.js";
import { runTurn, type TurnEnd, type TurnSetup } from "../../src/turns/runner.js";
import { blackPng, picture } from "../images/fixtures.js";
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from "../model/fakeOpenAI.js";
import { openaiAdapter } from "../model/support.js";
import { openSession, sessionDirs, type SessionDirs } from "../session/fixtures.js";
import { HAVE_TEST_VENV, TEST_VENV_PYTHON } from "../support/testVenv.js";

let dirs: SessionDirs;
let session: Session;
let server: FakeOpenAI;
let adapter: ModelAdapter;
const prompts = loadPrompts(installDir());
let plot: Buffer;

beforeAll(async () => {
  dirs = await sessionDirs();
  plot = await picture(640, 480);
  const big = await picture(3000, 2000);
  const files: Record<string, Buffer> = {
    "plot.b64": plot,
    "big.b64": big,
    "badsig.b64": Buffer.concat([Buffer.from("NOTAPNG!"), plot.subarray(8)]),
    "truncated.b64": plot.subarray(0, Math.floor(plot.length / 2)),
    "bomb.b64": await blackPng(30_000, 30_000),
  };
  for (const [name, bytes] of Object.entries(files)) await writeFile(join(dirs.workspace, name), bytes.toString("base64"));
  session = await openSession(dirs);
  server = await startFakeOpenAI();
  adapter = await openaiAdapter(server);
}, 120_000);

afterAll(async () => {
  await session?.close();
  await server?.close();
  await dirs?.cleanup();
});

let state: ConversationState;
beforeEach(() => {
  state = EMPTY_CONVERSATION;
  server.requests.length = 0;
});

const python = (code: string, id = "call_py"): FakeReply => ({ kind: "reply", toolCalls: [{ id, name: "python", arguments: JSON.stringify({ code }) }] });
const prose = (text: string): FakeReply => ({ kind: "reply", text });
/** Python that shows the base64 in workspace file `name` as a raw `mime` display bundle with a stand-in text. */
const show = (name: string, mime = "image/png") =>
  `display({${JSON.stringify(mime)}: open(${JSON.stringify(name)}).read(), 'text/plain': '<stand-in>'}, raw=True)`;
const SVG = `display({'image/svg+xml': '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>', 'text/plain': '<svg stand-in>'}, raw=True)`;

/** Runs one turn with `replies` queued; returns how it ended and the rows it drew. */
async function turn(replies: FakeReply[], setup: Partial<TurnSetup> = {}, host: Session = session): Promise<{ end: TurnEnd; rows: TranscriptRow[] }> {
  server.enqueue(...replies);
  const rows: TranscriptRow[] = [];
  const done = await runTurn(
    { turnId: `t${Math.random()}`, visibleText: "plot it", modelInput: "plot it" },
    state,
    { adapter, mode: "tool", contextTokens: 200_000, prompts, host, emit: (row) => rows.push(row), ...setup },
    new AbortController().signal,
  );
  state = done.state;
  return { end: done.end, rows };
}

interface SentMessage {
  role: string;
  content: string | null | { type: string; text?: string; image_url?: { url: string } }[];
}
const messagesOf = (index: number) => server.requests[index]!.body.messages as SentMessage[];
const imageParts = (message: SentMessage) => (Array.isArray(message.content) ? message.content.filter((part) => part.type === "image_url") : []);
const textOf = (message: SentMessage) =>
  Array.isArray(message.content) ? message.content.filter((part) => part.type === "text").map((part) => part.text).join("") : (message.content ?? "");
const allImageParts = (index: number) => messagesOf(index).flatMap(imageParts);

/** The bytes and size of a data URL's image. */
async function decoded(url: string): Promise<{ mime: string; width: number; height: number; bytes: Buffer }> {
  const match = /^data:(image\/[a-z]+);base64,([A-Za-z0-9+/=]+)$/.exec(url);
  if (match === null) throw new Error(`not a data URL: ${url.slice(0, 60)}`);
  const bytes = Buffer.from(match[2]!, "base64");
  const meta = await sharp(bytes).metadata();
  return { mime: match[1]!, width: meta.width!, height: meta.height!, bytes };
}

describe("I-2 a cell's images reach the model", () => {
  it("the tool result says an image follows, and the next user message carries it as an image_url data URL; the text/plain stand-in is left out", async () => {
    const { end, rows } = await turn([python(`print('drawn')\n${show("plot.b64")}`), prose("a curve")]);
    expect(end.result).toBe("completed");
    const sent = messagesOf(1);
    const toolAt = sent.findIndex((message) => message.role === "tool");
    expect(textOf(sent[toolAt]!)).toBe("drawn\n1 image follows in the next message.");
    expect(textOf(sent[toolAt]!)).not.toContain("stand-in");
    const carrier = sent[toolAt + 1]!;
    expect(carrier.role).toBe("user");
    expect(textOf(carrier)).toMatch(/^Images of the python call call_py: \[image 1 · 640×480 PNG · [\d.]+ KB\]/);
    const parts = imageParts(carrier);
    expect(parts).toHaveLength(1);
    const image = await decoded(parts[0]!.image_url!.url);
    expect(image).toMatchObject({ mime: "image/png", width: 640, height: 480 });
    expect(image.bytes.equals(plot)).toBe(true);
    // message[0] is the same system text with images as without (O-4).
    expect(sent[0]!.role).toBe("system");
    expect(allImageParts(0)).toHaveLength(0);
    // I-3: the output row carries the kept image, whose file holds the bytes, 0600.
    const output = rows.find((row) => row.kind === "output");
    expect(output).toMatchObject({ kind: "output", text: "drawn\n", images: [{ mime: "image/png", width: 640, height: 480, bytes: plot.length }] });
    const ref = (output as { images: readonly { id: string }[] }).images[0]!;
    const file = join(dirs.stateDir, IMAGES_DIR, `${ref.id}.png`);
    expect(readFileSync(file).equals(plot)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  }, 120_000);

  it("a 3000×2000 image is scaled down to MAX_IMAGE_EDGE_PX on the runtime's side before it is sent", async () => {
    await turn([python(show("big.b64")), prose("big")]);
    const image = await decoded(allImageParts(1)[0]!.image_url!.url);
    expect(image.width).toBe(MAX_IMAGE_EDGE_PX);
    expect(image.height).toBe(Math.round((2000 * MAX_IMAGE_EDGE_PX) / 3000));
  }, 120_000);

  it("a bad signature, a truncated PNG, a 30000×30000 bomb and an SVG each reach the model as a note, never as a part; the good image still goes", async () => {
    const code = [show("badsig.b64"), show("truncated.b64"), show("bomb.b64"), show("plot.b64")].join("\n");
    await turn([python(code, "call_bad"), python(SVG, "call_svg"), prose("noted")]);
    const result = textOf(messagesOf(1).find((message) => message.role === "tool")!);
    expect(result).toMatch(/^image 1 of 4 dropped: .*\nimage 2 of 4 dropped: .*\nimage 3 of 4 dropped: .*\n1 image follows in the next message\.$/);
    expect(result).toMatch(/image 3 of 4 dropped: .*(30000|pixels)/);
    expect(allImageParts(1)).toHaveLength(1);
    const svgResult = textOf(messagesOf(2).filter((message) => message.role === "tool").at(-1)!);
    expect(svgResult).toMatch(/^image 1 of 1 dropped: .*SVG/i);
    expect(svgResult).not.toContain("follows");
    // Only the first call's good image has been sent, in the step after it.
    expect(allImageParts(2)).toHaveLength(1);
  }, 120_000);

  it(`100 images in one cell: ${MAX_IMAGES_PER_EXECUTION} are sent, the rest are named in one note`, async () => {
    const { rows } = await turn([python(`for _ in range(100):\n    ${show("plot.b64")}`), prose("many")]);
    const result = textOf(messagesOf(1).find((message) => message.role === "tool")!);
    expect(result).toBe(`images ${MAX_IMAGES_PER_EXECUTION + 1}–100 of 100 dropped: MAX_IMAGES_PER_EXECUTION is ${MAX_IMAGES_PER_EXECUTION}\n${MAX_IMAGES_PER_EXECUTION} images follow in the next message.`);
    expect(allImageParts(1)).toHaveLength(MAX_IMAGES_PER_EXECUTION);
    // The same content is kept once for people; the row still lists each image shown.
    const output = rows.find((row) => row.kind === "output") as { images: readonly { id: string }[] };
    expect(output.images).toHaveLength(MAX_IMAGES_PER_EXECUTION);
    expect(new Set(output.images.map((image) => image.id)).size).toBe(1);
  }, 120_000);

  it.skipIf(!HAVE_TEST_VENV)("a matplotlib figure drawn in the sandboxed kernel arrives as a PNG part", async () => {
    const own = await sessionDirs();
    await writeFile(join(own.stateDir, "settings.json"), JSON.stringify({ kernel: { python: TEST_VENV_PYTHON } }), { mode: 0o600 });
    const plotting = await openSession(own);
    try {
      await turn([python("import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()"), prose("a line")], {}, plotting);
      const parts = allImageParts(1);
      expect(parts).toHaveLength(1);
      const image = await decoded(parts[0]!.image_url!.url);
      expect(image.mime).toBe("image/png");
      expect(image.width).toBeGreaterThan(100);
    } finally {
      await plotting.close();
      await own.cleanup();
    }
  }, 120_000);
});

describe("I-2 when images do not go", () => {
  it("model.images false: no image part, a note that says why in their place", async () => {
    await turn([python(show("plot.b64")), prose("ok")], { images: false });
    expect(allImageParts(1)).toHaveLength(0);
    const carrier = messagesOf(1).filter((message) => message.role === "user").at(-1)!;
    expect(textOf(carrier)).toMatch(/\[1 image not sent: model\.images is false\]$/);
  }, 120_000);

  it("an endpoint that answers a request with images with a 4xx naming them is asked again without them, and the session remembers", async () => {
    const refusal = new ImageRefusal();
    const refused: FakeReply = { kind: "status", status: 400, body: JSON.stringify({ error: { message: "This model does not support image_url content", type: "invalid_request_error" } }) };
    const first = await turn([python(show("plot.b64")), refused, prose("seen as text")], { imageRefusal: refusal });
    expect(first.end.result).toBe("completed");
    expect(allImageParts(1)).toHaveLength(1);
    expect(allImageParts(2)).toHaveLength(0);
    expect(textOf(messagesOf(2).filter((message) => message.role === "user").at(-1)!)).toMatch(/\[1 image not sent: the model server refused images earlier in this session \(.*image_url/);
    expect(first.rows).toContainEqual({ kind: "notice", text: expect.stringMatching(/refused images/) });
    // The next turn of the session sends the note without trying.
    server.requests.length = 0;
    await turn([python(show("plot.b64"), "call_again"), prose("still text")], { imageRefusal: refusal });
    expect(server.requests.flatMap((_, index) => allImageParts(index))).toHaveLength(0);
  }, 120_000);

  it("a 4xx that does not name images fails the turn as before, and images stay on", async () => {
    const refusal = new ImageRefusal();
    const { end } = await turn([python(show("plot.b64")), { kind: "status", status: 400, body: JSON.stringify({ error: { message: "max_tokens is too large" } }) }], { imageRefusal: refusal });
    expect(end.result).toBe("failed");
    expect(refusal.reason).toBeUndefined();
  }, 120_000);

  it(`a request carries only the newest MAX_IMAGES_IN_CONTEXT (${MAX_IMAGES_IN_CONTEXT}) images; older ones say they are no longer sent`, async () => {
    const four = Array.from({ length: MAX_IMAGES_PER_EXECUTION }, () => show("plot.b64")).join("\n");
    const calls = Math.ceil(MAX_IMAGES_IN_CONTEXT / MAX_IMAGES_PER_EXECUTION) + 1;
    await turn([...Array.from({ length: calls }, (_, index) => python(four, `call_${index}`)), prose("done")]);
    const last = server.requests.length - 1;
    expect(allImageParts(last)).toHaveLength(MAX_IMAGES_IN_CONTEXT);
    const carriers = messagesOf(last).filter((message) => message.role === "user" && textOf(message).startsWith("Images of"));
    expect(carriers).toHaveLength(calls);
    expect(textOf(carriers[0]!)).toMatch(/\[4 images of this message no longer sent: a request carries only the newest MAX_IMAGES_IN_CONTEXT \(8\) images of the conversation\]/);
    expect(imageParts(carriers.at(-1)!)).toHaveLength(MAX_IMAGES_PER_EXECUTION);
    // What is kept for the next turn is bounded the same way.
    const keptImages = state.turns.flatMap((t) => t.messages).reduce((count, message) => count + (message.role === "user" ? (message.images?.length ?? 0) : 0), 0);
    expect(keptImages).toBeLessThanOrEqual(MAX_IMAGES_IN_CONTEXT);
  }, 180_000);
});
