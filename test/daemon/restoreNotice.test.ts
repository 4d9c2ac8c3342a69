import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newOperationId } from "../../src/operations/index.js";
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from "../model/fakeOpenAI.js";
import { KEY, KEY_ENV } from "../model/support.js";
import { call, outcomeOf, type DaemonProcess } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";
import { poll } from "../support/poll.js";

let server: FakeOpenAI;

beforeAll(async () => {
  server = await startFakeOpenAI();
});
afterAll(async () => {
  await server?.close();
});
const fixture = daemonFixture({ signal: "SIGKILL" });

/** The line the model reads when its kernel came back from a checkpoint. */
const TOLD = "[albedo] the kernel restarted and was restored from its checkpoint: ";

/** A daemon whose model is the fake server, and one session on it. */
async function daemonWithModel(): Promise<{ daemon: DaemonProcess; session: string }> {
  const { dirs } = fixture;
  const settings = { model: { provider: "openai", base_url: server.baseUrl, name: "fake", api_key_env: KEY_ENV, mode: "tool" } };
  await writeFile(join(dirs.state, "settings.json"), JSON.stringify(settings), { mode: 0o600 });
  const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"], { [KEY_ENV]: KEY });
  const opened = await call(daemon, "POST", "/sessions", { workspace: dirs.workspace });
  return { daemon, session: opened.body.id as string };
}

const say = async (daemon: DaemonProcess, session: string, text: string) =>
  outcomeOf(daemon, (await call(daemon, "POST", `/sessions/${session}/events`, { operation_id: newOperationId(), type: "message", text })).body.operation_id);
const prose = (text: string): FakeReply => ({ kind: "reply", text });
const python = (code: string): FakeReply => ({ kind: "reply", toolCalls: [{ id: "c_py", name: "python", arguments: JSON.stringify({ code }) }] });

/** Every message the model was sent, as text (a message's content may be a string or parts). */
function sentTexts(): string[] {
  return server.requests.flatMap((request) => (request.body?.messages ?? []) as { content: unknown }[]).map((message) => JSON.stringify(message.content));
}

/** How many distinct messages across the model's requests carried the restore line (a message resent with the history counts once). */
function toldMessages(): Set<string> {
  return new Set(sentTexts().filter((text) => text.includes(TOLD)));
}

/** The notice rows of the session's transcript that tell a restore. */
async function restoreRows(daemon: DaemonProcess, session: string): Promise<string[]> {
  const rows = (await call(daemon, "GET", `/sessions/${session}/transcript`)).body.rows as { kind: string; text?: string }[];
  return rows.filter((row) => row.kind === "notice" && row.text?.startsWith("the kernel restarted and was restored")).map((row) => row.text!);
}

/**
 * Waits until the kernel's checkpoint lists `name`: it is written after the cell answered, and a
 * kernel killed before that comes back without the cell's names (nothing to restore).
 */
async function checkpointed(session: string, name: string): Promise<void> {
  const manifest = join(fixture.dirs.state, "checkpoints", session, "kernel", "manifest.json");
  await poll(() => {
    try {
      return name in (JSON.parse(readFileSync(manifest, "utf8")) as { names: Record<string, unknown> }).names;
    } catch {
      return false;
    }
  }, { what: `the checkpoint to list ${name}` });
}

async function kernelPid(daemon: DaemonProcess, session: string): Promise<number> {
  return (await call(daemon, "GET", `/sessions/${session}`)).body.kernel.pid as number;
}

describe("K-15 O-9 the model is told what came back", () => {
  it("a kernel killed between turns: the next turn draws one notice row and the model's input carries the restore line once", { timeout: 120_000 }, async () => {
    server.requests.length = 0;
    const { daemon, session } = await daemonWithModel();
    const executed = await call(daemon, "POST", `/sessions/${session}/execute`, { code: "frame = {'rows': 3}" });
    expect(executed.status).toBe(200);
    await checkpointed(session, "frame");
    const pid = await kernelPid(daemon, session);
    process.kill(pid, "SIGKILL");
    await poll(async () => {
      const kernel = (await call(daemon, "GET", `/sessions/${session}`)).body.kernel;
      return kernel.pid !== pid && kernel.restore !== null;
    }, { what: "the kernel restarted and restored" });
    server.enqueue(prose("Still here."), prose("Again."));
    expect((await say(daemon, session, "what is left?")).outcome).toMatchObject({ result: "completed" });
    expect(await restoreRows(daemon, session)).toEqual(["the kernel restarted and was restored from its checkpoint: restored 1 of 1 name"]);
    const first = server.requests[0]!.body.messages.at(-1).content as string;
    expect(first.startsWith(`${TOLD}restored 1 of 1 name\n\n`)).toBe(true);
    // The next turn is not told again.
    expect((await say(daemon, session, "and now?")).outcome).toMatchObject({ result: "completed" });
    expect(server.requests[1]!.body.messages.at(-1).content).not.toContain(TOLD);
    expect(toldMessages().size).toBe(1);
    expect(await restoreRows(daemon, session)).toHaveLength(1);
  });

  it("a kernel killed during the python call: the tool result carries the restore line, the turn draws one notice row", { timeout: 120_000 }, async () => {
    server.requests.length = 0;
    const { daemon, session } = await daemonWithModel();
    await call(daemon, "POST", `/sessions/${session}/execute`, { code: "kept = [1, 2, 3]" });
    await checkpointed(session, "kept");
    server.enqueue(python("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"), prose("The kernel died."), prose("Fine."));
    expect((await say(daemon, session, "crash it")).outcome).toMatchObject({ result: "completed" });
    const tool = (server.requests[1]!.body.messages as { role: string; content: string }[]).find((message) => message.role === "tool")!;
    expect(tool.content).toContain(`${TOLD}restored 1 of 1 name`);
    expect(await restoreRows(daemon, session)).toHaveLength(1);
    expect((await say(daemon, session, "still there?")).outcome).toMatchObject({ result: "completed" });
    expect(server.requests[2]!.body.messages.at(-1).content).not.toContain(TOLD);
    expect(toldMessages().size).toBe(1);
    expect((await call(daemon, "POST", `/sessions/${session}/execute`, { code: "print(kept)" })).body.outputs[0].content.text).toBe("[1, 2, 3]\n");
  });
});
