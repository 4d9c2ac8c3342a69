/**
 * Lone surrogates ("\ud800", which has no UTF-8 form) at each boundary where text enters the
 * runtime: they become U+FFFD there, so nothing stored or served holds one. The daemon-level proof
 * (transcript, receipt and stream parsed strictly) is in test/daemon/hostileTurns.test.ts.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isWellFormedJson, parseJsonWellFormed, wellFormedJson } from "../../src/json/index.js";
import { createSigner } from "../../src/kernel/signing.js";
import { deserialize, serialize } from "../../src/kernel/wire.js";
import { serverSettings } from "../../src/kernel/remote/server.js";
import { quoteServerText } from "../../src/model/errors.js";
import { ReplyBuilder } from "../../src/model/replyBuilder.js";
import { readStubScript } from "../../src/model/stubScript.js";
import { decodeMessage } from "../../src/rpc/protocol.js";
import { parseSkillDocument } from "../../src/skills/frontmatter.js";
import { tempDirs } from "../support/tempDirs.js";

const dirs = tempDirs("albedo-surrogates-");
afterAll(() => dirs.cleanup());

const LONE = "\ud800";
const FFFD = "\ufffd";
/** A JSON escape for a lone surrogate, as text. */
const ESCAPE = "\\ud800";

describe("B parseJsonWellFormed, wellFormedJson and isWellFormedJson", () => {
  it("replaces lone surrogates in strings and keys, at any depth, and keeps pairs", () => {
    expect(parseJsonWellFormed(`{"a${ESCAPE}": ["x${ESCAPE}", {"b": "\\udc00y"}], "ok": "\\ud83d\\ude00"}`)).toEqual({ [`a${FFFD}`]: [`x${FFFD}`, { b: `${FFFD}y` }], ok: "😀" });
    expect(parseJsonWellFormed(`"${ESCAPE}"`)).toBe(FFFD);
    expect(parseJsonWellFormed('{"plain": "text"}')).toEqual({ plain: "text" });
  });

  it("walks a value nested far deeper than the call stack goes, and a cycle, without overflowing", () => {
    const deep: unknown[] = [LONE];
    let top = deep;
    for (let i = 0; i < 100_000; i++) top = [top];
    const cyclic: Record<string, unknown> = { text: LONE };
    cyclic.self = cyclic;
    expect(isWellFormedJson(top)).toBe(false);
    expect(isWellFormedJson(wellFormedJson(top))).toBe(true);
    expect(deep[0]).toBe(FFFD);
    expect(wellFormedJson(cyclic).text).toBe(FFFD);
    expect(isWellFormedJson(cyclic)).toBe(true);
  });
});

describe("B model replies", () => {
  it("ReplyBuilder: a lone surrogate in prose, ids, names and arguments is U+FFFD; a pair split across deltas is joined", () => {
    const streamed: string[] = [];
    const builder = new ReplyBuilder(1024, (delta) => streamed.push(delta));
    for (const delta of ["a", "\ud83d", "\ude00b", LONE, "c", "\udbff"]) builder.text(delta);
    builder.toolCall(0, { id: `id${LONE}`, name: `n${LONE}`, arguments: `{"x": "${LONE}` });
    builder.toolCall(0, { arguments: '"}' });
    builder.finish("tool_calls");
    const reply = builder.build();
    expect(reply.text).toBe(`a😀b${FFFD}c${FFFD}`);
    expect(streamed.join("")).toBe(reply.text);
    expect(streamed.every((delta) => delta.isWellFormed())).toBe(true);
    expect(reply.toolCalls).toEqual([{ id: `id${FFFD}`, name: `n${FFFD}`, arguments: `{"x": "${FFFD}"}` }]);
  });

  it("the stub model's script: replies and tool-call arguments", async () => {
    const file = join(dirs.make(), "script.json");
    writeFileSync(file, `{"replies": [{"text": "hi ${ESCAPE}", "tool_calls": [{"name": "python", "arguments": {"code": "${ESCAPE}"}}]}]}`);
    const script = await readStubScript(file);
    expect(script.replies[0]).toMatchObject({ text: `hi ${FFFD}`, tool_calls: [{ arguments: { code: FFFD } }] });
  });

  it("server text quoted into an error, even when the cut splits a pair", () => {
    expect(quoteServerText(`bad ${LONE} model`, undefined)).toBe(`bad ${FFFD} model`);
    expect(quoteServerText("😀".repeat(5000), undefined).isWellFormed()).toBe(true);
  });
});

describe("B kernel text", () => {
  it("a message a hostile kernel signs with an escaped lone surrogate decodes well-formed", () => {
    const signer = createSigner("k".repeat(64));
    const header = { msg_id: "m1", msg_type: "stream", session: "s", username: "u", date: "", version: "5.3" };
    const frames = serialize({ channel: "iopub", header, parent_header: {}, metadata: {}, content: { name: "stdout", text: `out ${LONE}` } } as never, signer);
    const decoded = deserialize(frames, signer, "iopub");
    expect(decoded.ok && decoded.message.content).toEqual({ name: "stdout", text: `out ${FFFD}` });
  });

  it("a JSON-RPC call from the kernel carries U+FFFD in its params", () => {
    const decoded = decodeMessage(Buffer.from(`{"jsonrpc": "2.0", "id": 1, "method": "skills.read", "params": {"name": "x${ESCAPE}"}}`));
    expect(decoded).toMatchObject({ kind: "request", request: { params: { name: `x${FFFD}` } } });
  });

  it("a remote kernel's message decoded by the services serializer albedo configures", () => {
    const { serializer } = serverSettings({ url: "http://127.0.0.1:1/", token: "" });
    const header = { msg_id: "m", msg_type: "stream", session: "s", username: "u", version: "5.3", date: "" };
    const text = JSON.stringify({ channel: "iopub", header, parent_header: {}, metadata: {}, content: { name: "stdout", text: LONE }, buffers: [] });
    const message = serializer.deserialize(text as unknown as ArrayBuffer, "");
    expect(message.content).toEqual({ name: "stdout", text: FFFD });
  });
});

describe("S-3 B skill frontmatter", () => {
  it('a double-quoted "\\ud800" in a description is U+FFFD in the parsed fields', () => {
    const parsed = parseSkillDocument(`---\nname: demo\ndescription: "odd ${ESCAPE} text"\n---\nBody\n`);
    expect(parsed.fields?.description).toBe(`odd ${FFFD} text`);
  });
});
