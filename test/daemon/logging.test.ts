import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RPC_MAX_REFUSAL_PEERS } from "../../src/rpc/index.js";
import { call, type DaemonProcess } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";
import { alive } from "../support/process.js";
import { writeSkill } from "../support/skills.js";

/** Requests that each make the daemon log an error (503 kernel_unavailable: the interpreter does not exist). */
const FAILING_REQUESTS = 20;
/** Wrong-token frames one kernel socket sends; the probe counted 424,001 in 20 s. */
const FLOOD_FRAMES = 5_000;
/** Sockets that each send one wrong-token frame: more than the refusal log tracks one by one. */
const FLOOD_PEERS = 3 * RPC_MAX_REFUSAL_PEERS;
/**
 * Wrong frames sent before the cell reads their answers: well under ZeroMQ's default send high-water
 * mark (1000), past which a ROUTER drops what it would send to a peer that has not read yet, so a
 * loaded machine cannot lose the answer the cell waits for.
 */
const FLOOD_BATCH = 250;
/** How long the flood cell waits for one reply before it fails (a liveness bound, far above normal). */
const REPLY_WAIT_MS = 20_000;
/** Per-test bound for the tests that boot a kernel. */
const KERNEL_TEST_MS = 120_000;
const NO_PYTHON = { ALBEDO_PYTHON: "/nonexistent/albedo-test/python" };

const fixture = daemonFixture();

/** Sends FAILING_REQUESTS requests that the daemon answers 503 and logs as errors. */
async function makeErrors(running: DaemonProcess, workspace: string): Promise<void> {
  for (let n = 0; n < FAILING_REQUESTS; n += 1) {
    expect((await call(running, "POST", "/sessions", { workspace })).body).toMatchObject({ status: 503, code: "kernel_unavailable" });
  }
}

describe("D-1 B the daemon survives a log it cannot write", () => {
  it("--log-file /dev/full: every request is answered, the daemon keeps running, GET /health counts the dropped writes", async () => {
    const { dirs } = fixture;
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0", "--log-file", "/dev/full"], NO_PYTHON);
    await makeErrors(daemon, dirs.workspace);
    const health = (await call(daemon, "GET", "/health")).body;
    expect(health).toMatchObject({ ok: true, log: { file: "/dev/full", last_error: "ENOSPC" } });
    expect(health.log.dropped_writes).toBeGreaterThanOrEqual(FAILING_REQUESTS);
    expect(alive(daemon.process.pid!)).toBe(true);
  });

  it("stderr whose reader went away (EPIPE): the daemon keeps serving and counts the failed writes", async () => {
    const { dirs } = fixture;
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"], NO_PYTHON);
    daemon.process.stderr!.destroy();
    await makeErrors(daemon, dirs.workspace);
    const health = (await call(daemon, "GET", "/health")).body;
    expect(health).toMatchObject({ ok: true, log: { file: null, last_error: "EPIPE" } });
    expect(health.log.dropped_writes).toBeGreaterThan(0);
    expect(daemon.process.exitCode).toBeNull();
  });
});

/** Cell code: floods the session's RPC socket with wrong-token frames from one socket and from FLOOD_PEERS more, then makes a good call. */
function floodCell(): string {
  return `
import json as _json, os as _os, zmq as _zmq

def _flood():
    endpoint, token = _os.environ["ALBEDO_RPC_ENDPOINT"], _os.environ["ALBEDO_RPC_TOKEN"].encode()
    wrong = b"0" * len(token)
    request = lambda rid: _json.dumps({"jsonrpc": "2.0", "id": rid, "method": "skills.list", "params": {}}).encode()
    context = _zmq.Context()

    def dealer():
        sock = context.socket(_zmq.DEALER)
        for option in (_zmq.LINGER, _zmq.SNDHWM, _zmq.RCVHWM):
            sock.setsockopt(option, 0)
        sock.connect(endpoint)
        return sock

    def until_reply(sock, rid):
        while True:
            if not sock.poll(${REPLY_WAIT_MS}):
                raise TimeoutError(f"no reply to {rid!r}")
            if _json.loads(sock.recv_multipart()[-1]).get("id") == rid:
                return

    try:
        sock = dealer()
        # Frames of one socket are served in order: once a batch's last frame is answered, all of it was refused.
        for start in range(0, ${FLOOD_FRAMES}, ${FLOOD_BATCH}):
            batch = range(start, min(start + ${FLOOD_BATCH}, ${FLOOD_FRAMES}))
            for rid in batch:
                sock.send_multipart([wrong, request(rid)])
            until_reply(sock, batch[-1])
        sock.send_multipart([token, request("last")])
        until_reply(sock, "last")
        sock.close()
        for rid in range(${FLOOD_PEERS}):
            sock = dealer()
            sock.send_multipart([wrong, request(rid)])
            until_reply(sock, rid)
            sock.close()
    finally:
        # Closes whatever socket a failure left open, so a failing flood ends the cell instead of hanging it.
        context.destroy(linger=0)

_flood()
print("demo" in [s["name"] for s in (await skills.list())["skills"]])
`;
}

/** The daemon log's lines about wrong tokens, with the count each stands for (1, or a summary's count). */
function tokenLines(file: string): { line: string; count: number }[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.includes("wrong token"))
    .map((line) => ({ line, count: Number((JSON.parse(/(\{.*\})$/.exec(line)![1]!) as { count?: number }).count ?? 1) }));
}

describe("B K-6 a kernel flooding its RPC socket with wrong tokens grows the daemon log by a bounded number of lines", () => {
  it(`${FLOOD_FRAMES} frames from one socket and one each from ${FLOOD_PEERS} more: at most 2 × RPC_MAX_REFUSAL_PEERS + 1 lines, every refusal counted, the session keeps serving`, async () => {
    const { dirs } = fixture;
    writeSkill(join(dirs.workspace, ".agents", "skills"), "demo");
    const logFile = join(dirs.state, "daemon.log");
    // No sandbox: what is under test is the daemon's log, and the kernel needs no confinement to send frames.
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0", "--sandbox", "off", "--log-file", logFile]);
    const created = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    const linesBefore = readFileSync(logFile, "utf8").split("\n").length;

    const run = await call(daemon, "POST", `/sessions/${id}/execute`, { code: floodCell() });
    expect(run.body).toMatchObject({ status: "ok", outputs: [{ msg_type: "stream", content: { text: "True\n" } }] });
    const after = await call(daemon, "POST", `/sessions/${id}/execute`, { code: "print((await commands.invoke('/demo'))['name'])" });
    expect(after.body).toMatchObject({ status: "ok", outputs: [{ content: { text: "demo\n" } }] });
    // Logged at once: the first refusal of each peer the window tracks, nothing more.
    expect(tokenLines(logFile)).toHaveLength(RPC_MAX_REFUSAL_PEERS);

    // Closing the session ends the window: the counted refusals are reported.
    expect((await call(daemon, "DELETE", `/sessions/${id}`)).status).toBe(204);
    const lines = tokenLines(logFile);
    expect(lines.length).toBeLessThanOrEqual(2 * RPC_MAX_REFUSAL_PEERS + 1);
    expect(lines.reduce((sum, { count }) => sum + count, 0)).toBe(FLOOD_FRAMES + FLOOD_PEERS);
    expect(lines.some(({ line }) => line.includes(`refused ${FLOOD_FRAMES - 1} more messages with a missing or wrong token in the last minute`))).toBe(true);
    expect(readFileSync(logFile, "utf8").split("\n").length - linesBefore).toBeLessThan(4 * RPC_MAX_REFUSAL_PEERS);
    expect((await call(daemon, "GET", "/health")).body).toMatchObject({ ok: true, log: { dropped_writes: 0 } });
  }, KERNEL_TEST_MS);
});
