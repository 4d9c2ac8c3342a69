import { afterEach, describe, expect, it } from "vitest";
import { RouteTable, RpcServer, RPC_MAX_MESSAGE_BYTES } from "../../src/rpc/index.js";
import { makeRunDir } from "../rpc/helpers.js";

const frame = (value: unknown) => Buffer.from(JSON.stringify(value), "utf8");

describe("K-12 an attached peer (a remote kernel's comm) goes through the session's own dispatcher", () => {
  const run = makeRunDir();
  let server: RpcServer | undefined;

  afterEach(async () => {
    await server?.close();
    run.remove();
  });

  it("is served by the route table, held to the message limit, told of cancels after its hello, and silent once detached", async () => {
    server = new RpcServer({ runDir: run.dir, logger: () => {}, routes: RouteTable.of({ "skills.list": async (_params, context) => ({ cell: context.cell }) }) });
    await server.start();
    const sent: unknown[] = [];
    const peer = server.attachPeer("kernel/shell", (text) => sent.push(JSON.parse(text)));
    peer.receive(frame({ jsonrpc: "2.0", method: "albedo/hello" }));
    peer.receive(frame({ jsonrpc: "2.0", id: 1, method: "skills.list", params: {}, cell: "c1" }));
    peer.receive(frame({ jsonrpc: "2.0", id: 2, method: "nope", params: {} }));
    peer.receive(Buffer.alloc(RPC_MAX_MESSAGE_BYTES + 1, 0x20));
    await new Promise((settle) => setImmediate(settle));
    server.cancelCell("c9");
    expect(sent).toHaveLength(4);
    // Refusals answer at once, the handler a microtask later; the cancel comes last.
    expect(sent.at(-1)).toEqual({ jsonrpc: "2.0", method: "albedo/cancel", params: { cell: "c9" } });
    expect(sent).toEqual(expect.arrayContaining([
      { jsonrpc: "2.0", id: 1, result: { cell: "c1" } },
      { jsonrpc: "2.0", id: 2, error: { code: -32601, message: "method not found: nope" } },
      expect.objectContaining({ id: null, error: expect.objectContaining({ data: expect.objectContaining({ limit: "RPC_MAX_MESSAGE_BYTES" }) }) }),
    ]));
    peer.detach();
    peer.receive(frame({ jsonrpc: "2.0", id: 3, method: "skills.list", params: {} }));
    await new Promise((settle) => setImmediate(settle));
    expect(sent).toHaveLength(4);
  });
});
