/**
 * A cell's images on their way to the model (I-2) and into the transcript (I-3): a real sandboxed
 * kernel shows them, the real OpenAI client sends them to the local OpenAI-compatible server,
 * which records the image parts it receives. Tool messages carry text only, so the tool result
 * says how many images follow and a user message after the step's results carries them.
 */
import { readFileSync, statSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { storeConversations } from "../../src/daemon/turns.js";
import { ImageStore, IMAGES_DIR, MAX_IMAGE_EDGE_PX, MAX_IMAGES_PER_EXECUTION, type ImageRef } from "../../src/images/index.js";
import type { ModelAdapter } from "../../src/model/index.js";
import { OperationsStore } from "../../src/operations/index.js";
import { installDir } from "../../src/platform/index.js";
import type { Session } from "../../src/session/index.js";
import { loadPrompts } from "../../src/turns/context.js";
import { EMPTY_CONVERSATION, type ConversationState } from "../../src/turns/conversation.js";
import { ImageRefusal } from "../../src/turns/images.js";
import { MAX_IMAGES_IN_CONTEXT } from "../../src/turns/limits.js";
import type { TranscriptRow } from "../../src/turns/rows.js";
import { runTurn, type TurnEnd, type TurnSetup } from "../../src/turns/runner.js";
import type { TurnHost } from "../../src/turns/tools/index.js";
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
    "gone.b64": await picture(320, 200),
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
async function turn(replies: FakeReply[], setup: Partial<TurnSetup> = {}, host: TurnHost = session): Promise<{ end: TurnEnd; rows: TranscriptRow[] }> {
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

/** Every image the conversation's messages carry: a user message's own, a tool result's still sent. */
const carried = (from: ConversationState) =>
  from.turns.flatMap((t) => t.messages).flatMap((message) => (message.role === "user" ? (message.images ?? []) : message.role === "tool" ? (message.images?.sent ?? []) : []));

/** `session` as a turn host whose images go to `images` instead of the session's own store. */
function hostWith(images: ImageStore): TurnHost {
  return {
    workspace: session.workspace,
    stateDir: session.stateDir,
    get view() { return session.view; },
    kernel: session.kernel,
    skills: session.skills,
    images,
  };
}

/** A real image store that counts the reads requests make of it. */
class CountingStore extends ImageStore {
  reads = 0;
  override async read(ref: ImageRef): Promise<Buffer | undefined> {
    this.reads += 1;
    return super.read(ref);
  }
}

describe("I-2 I-3 the conversation keeps image references, not their bytes", () => {
  it("the step's next request sends the image just shown without reading it back; a later turn reads it from the store once for all its requests", async () => {
    const store = new CountingStore(dirs.stateDir);
    await turn([python(show("plot.b64")), prose("seen")], {}, hostWith(store));
    expect((await decoded(allImageParts(1)[0]!.image_url!.url)).bytes.equals(plot)).toBe(true);
    expect(store.reads).toBe(0);
    server.requests.length = 0;
    await turn([python("print(1)", "call_plain"), prose("still seen")], {}, hostWith(store));
    expect(allImageParts(0)).toHaveLength(1);
    expect((await decoded(allImageParts(1)[0]!.image_url!.url)).bytes.equals(plot)).toBe(true);
    expect(store.reads).toBe(1);
  }, 120_000);

  it("a result's image is kept by its store id; the next turn's request reads the same bytes back from the store", async () => {
    const { rows } = await turn([python(show("plot.b64")), prose("a curve")]);
    const ref = (rows.find((row) => row.kind === "output") as { images: readonly { id: string }[] }).images[0]!;
    expect(carried(state)).toEqual([{ id: ref.id, mime: "image/png", width: 640, height: 480, bytes: plot.length }]);
    const saved = JSON.stringify(state);
    expect(saved).not.toContain(plot.toString("base64").slice(0, 200));
    const result = state.turns.at(-1)!.messages.find((message) => message.role === "tool")!;
    expect(result).toMatchObject({ content: "1 image follows in the next message.", images: { labels: [expect.stringMatching(/^\[image 1 · 640×480 PNG · /)] } });
    server.requests.length = 0;
    await turn([prose("still seen")]);
    const parts = allImageParts(0);
    expect(parts).toHaveLength(1);
    expect((await decoded(parts[0]!.image_url!.url)).bytes.equals(plot)).toBe(true);
  }, 120_000);

  it("an image whose file is gone from the store reaches the model as a note", async () => {
    // An image no other test shows: the session's store would not write its file again.
    const { rows } = await turn([python(show("gone.b64"), "call_gone"), prose("seen")]);
    const ref = (rows.find((row) => row.kind === "output") as { images: readonly { id: string }[] }).images[0]!;
    await rm(join(dirs.stateDir, IMAGES_DIR, `${ref.id}.png`));
    server.requests.length = 0;
    await turn([prose("gone")]);
    expect(allImageParts(0)).toHaveLength(0);
    const carrier = messagesOf(0).find((message) => message.role === "user" && textOf(message).startsWith("Images of the python call call_gone"))!;
    expect(textOf(carrier)).toMatch(/^Images of the python call call_gone: \[image 1 · 320×200 PNG · [\d.]+ KB\]\n\[1 image not sent: its file is no longer in the session's image store\]$/);
  }, 120_000);

  it("an image the store refuses (its quota) stays in the conversation as bytes, so the model still receives it in later requests", async () => {
    const full = new ImageStore(dirs.stateDir, { quotaBytes: 10 });
    const { rows } = await turn([python(show("plot.b64")), prose("seen")], {}, hostWith(full));
    expect(rows.find((row) => row.kind === "output")).toMatchObject({ text: expect.stringMatching(/image 1 not kept: .*MAX_SESSION_IMAGE_BYTES/) });
    expect(carried(state)).toEqual([{ mime: "image/png", data: plot.toString("base64"), width: 640, height: 480 }]);
    server.requests.length = 0;
    await turn([prose("again")], {}, hostWith(full));
    expect((await decoded(allImageParts(0)[0]!.image_url!.url)).bytes.equals(plot)).toBe(true);
  }, 120_000);

  it(`what is kept for the next turn carries at most MAX_IMAGES_IN_CONTEXT (${MAX_IMAGES_IN_CONTEXT}) images`, async () => {
    const four = Array.from({ length: MAX_IMAGES_PER_EXECUTION }, () => show("plot.b64")).join("\n");
    const calls = Math.ceil(MAX_IMAGES_IN_CONTEXT / MAX_IMAGES_PER_EXECUTION) + 1;
    await turn([...Array.from({ length: calls }, (_, index) => python(four, `call_${index}`)), prose("done")]);
    expect(carried(state)).toHaveLength(MAX_IMAGES_IN_CONTEXT);
    const first = state.turns.at(-1)!.messages.find((message) => message.role === "tool")!;
    expect(first).toMatchObject({ images: { sent: [], notes: [expect.stringMatching(/^\[4 images of this message no longer sent/)] } });
  }, 180_000);
});

describe("I-2 O-9 a conversation saved before tool results carried their images", () => {
  it("loads from the operations database with its images' bytes in a user message, sends them as before, and saves the new turn's image by reference", async () => {
    const temp = await sessionDirs();
    const store = OperationsStore.open(join(temp.root, "albedo.db"));
    try {
      const conversations = storeConversations(store);
      const data = plot.toString("base64");
      const carrierText = "Images of the python call call_old: [image 1 · 640×480 PNG · 23.4 KB]";
      store.transcript.saveConversation("s-old", {
        turns: [{
          turn_id: "t-old",
          messages: [
            { role: "user", content: "plot it" },
            { role: "assistant", content: "", tool_calls: [{ id: "call_old", name: "python", arguments: "{}" }] },
            { role: "tool", tool_call_id: "call_old", content: "1 image follows in the next message." },
            { role: "user", content: carrierText, images: [{ mime: "image/png", data, width: 640, height: 480 }] },
            { role: "assistant", content: "a curve" },
          ],
        }],
        loaded: [],
      });
      state = conversations.load("s-old");
      await turn([python(show("plot.b64"), "call_new"), prose("two curves")]);
      const sent = messagesOf(0);
      const old = sent.find((message) => message.role === "user" && textOf(message) === carrierText)!;
      expect(old.content).toEqual([{ type: "text", text: carrierText }, { type: "image_url", image_url: { url: `data:image/png;base64,${data}` } }]);
      expect(allImageParts(1)).toHaveLength(2);
      conversations.save("s-old", state);
      const reread = conversations.load("s-old");
      const newResult = reread.turns.at(-1)!.messages.find((message) => message.role === "tool")!;
      expect(newResult).toMatchObject({ tool_call_id: "call_new", images: { sent: [{ id: expect.stringMatching(/^[0-9a-f]{64}$/), mime: "image/png" }] } });
      expect(JSON.stringify(reread).split(data).length - 1).toBe(1);
    } finally {
      store.close();
      await temp.cleanup();
    }
  }, 120_000);
});
