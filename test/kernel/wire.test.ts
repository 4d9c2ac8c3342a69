import { describe, expect, it } from "vitest";
import { completeRequest, executeRequest, inputReply, interruptRequest, kernelInfoRequest, shutdownRequest } from "../../src/kernel/messages.js";
import { createSigner } from "../../src/kernel/signing.js";
import { DELIMITER, deserialize, serialize } from "../../src/kernel/wire.js";

const signer = createSigner("a".repeat(64));

describe("K-2 wire signing", () => {
  it("round-trips a signed message, identities and buffers included", () => {
    const message = executeRequest("session-1", { code: "1+1", silent: false });
    message.buffers = [new Uint8Array([1, 2, 3])];
    const frames = [Buffer.from("ident"), ...serialize(message, signer)];
    const decoded = deserialize(frames, signer, "shell");
    expect(decoded.ok).toBe(true);
    if (!decoded.ok) return;
    expect(decoded.identities.map(String)).toEqual(["ident"]);
    expect(decoded.message.header).toEqual(message.header);
    expect(decoded.message.content).toEqual(message.content);
    expect(Array.from(decoded.message.buffers![0] as Uint8Array)).toEqual([1, 2, 3]);
    expect(decoded.message.header.version).toBe("5.3");
  });

  it("refuses a message signed with another key, a tampered body, and a truncated signature", () => {
    const frames = serialize(executeRequest("s", { code: "x" }), signer);
    expect(deserialize(serialize(executeRequest("s", { code: "x" }), createSigner("b".repeat(64))), signer, "shell")).toEqual({ ok: false, reason: "bad signature" });
    const tampered = [...frames];
    tampered[5] = Buffer.from(JSON.stringify({ code: "import os" }));
    expect(deserialize(tampered, signer, "shell")).toEqual({ ok: false, reason: "bad signature" });
    const truncated = [...frames];
    truncated[1] = truncated[1]!.subarray(0, 10);
    expect(deserialize(truncated, signer, "shell")).toEqual({ ok: false, reason: "bad signature" });
  });

  it("reports framing problems as values", () => {
    expect(deserialize([Buffer.from("x")], signer, "iopub")).toEqual({ ok: false, reason: "no <IDS|MSG> delimiter" });
    expect(deserialize([Buffer.from(DELIMITER), Buffer.from("sig")], signer, "iopub")).toEqual({ ok: false, reason: "too few frames" });
    const parts = ["[]", "{}", "{}", "{}"].map((part) => Buffer.from(part));
    const frames = [Buffer.from(DELIMITER), Buffer.from(signer.sign(parts)), ...parts];
    expect(deserialize(frames, signer, "iopub")).toEqual({ ok: false, reason: "a signed frame is not a JSON object" });
  });

  it("gives every request a fresh v4 UUID as its msg_id, the session's id and the protocol version", () => {
    const built = [
      ...Array.from({ length: 500 }, () => executeRequest("s", { code: "1" })),
      kernelInfoRequest("s"), completeRequest("s", "im", 2), interruptRequest("s"), shutdownRequest("s", false),
      // Any request's header does as the parent here: only its msg_id would be read.
      inputReply("s", executeRequest("s", { code: "input()" }) as never, "typed"),
    ];
    const ids = built.map((message) => message.header.msg_id);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(built.every((message) => message.header.session === "s" && message.header.version === "5.3")).toBe(true);
  });

  it("refuses an empty key", () => {
    expect(() => createSigner("")).toThrow(/non-empty/);
  });
});
