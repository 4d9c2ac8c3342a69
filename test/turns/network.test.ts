/**
 * The `network` rows of a conversation (N-4): each host a python step reached through the
 * session's egress proxy draws one row per decision, with its connections and bytes summed. A real
 * sandboxed kernel (bubblewrap, its own network namespace), its real proxy, test servers on
 * 127.0.0.2 and 127.0.0.3, and the local OpenAI-compatible test server scripting the model.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { humanSize } from "../../src/json/index.js";
import type { ModelAdapter } from "../../src/model/index.js";
import type { Session } from "../../src/session/index.js";
import { installDir } from "../../src/platform/index.js";
import { loadPrompts } from "../../src/turns/context.js";
import { EMPTY_CONVERSATION } from "../../src/turns/conversation.js";
import { MAX_NETWORK_ROWS_PER_STEP } from "../../src/turns/limits.js";
import type { TranscriptRow } from "../../src/turns/rows.js";
import { runTurn } from "../../src/turns/runner.js";
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from "../model/fakeOpenAI.js";
import { openaiAdapter } from "../model/support.js";
import { openSession, sessionDirs, type SessionDirs } from "../session/fixtures.js";
import { startServer, type TestServer } from "../network/support.js";

const TEST_TIMEOUT_MS = 120_000;
/** What the allowed server answers each request with. */
const BODY = "x".repeat(100_000);

const prompts = loadPrompts(installDir());
let model: FakeOpenAI;
let adapter: ModelAdapter;
let allowed: TestServer;
let other: TestServer;
let session: Session;
let dirs: SessionDirs;

beforeAll(async () => {
  model = await startFakeOpenAI();
  adapter = await openaiAdapter(model);
  allowed = await startServer("127.0.0.2", (_req, res) => void res.writeHead(200, { "content-type": "text/plain" }).end(BODY));
  other = await startServer("127.0.0.3", (_req, res) => void res.writeHead(200).end("should not be reached"));
  dirs = await sessionDirs();
  writeFileSync(join(dirs.stateDir, "settings.json"), JSON.stringify({ network: { allow: [`127.0.0.2:${allowed.port}`] } }));
  session = await openSession(dirs);
}, TEST_TIMEOUT_MS);

afterAll(async () => {
  await session?.close();
  await dirs?.cleanup();
  await Promise.all([allowed?.close(), other?.close(), model?.close()]);
});

const call = (code: string): FakeReply => ({ kind: "reply", toolCalls: [{ id: `call_${Math.random()}`, name: "python", arguments: JSON.stringify({ code }) }] });

async function turn(...replies: FakeReply[]): Promise<TranscriptRow[]> {
  model.enqueue(...replies, { kind: "reply", text: "done" });
  const rows: TranscriptRow[] = [];
  await runTurn(
    { turnId: `t${Math.random()}`, visibleText: "go", modelInput: "go" },
    EMPTY_CONVERSATION,
    { adapter, mode: "code", contextTokens: 32_768, prompts, host: session, emit: (row) => rows.push(row) },
    new AbortController().signal,
  );
  return rows;
}

/** Python fetching each URL through the proxy variables; a refusal is printed, not raised. */
const fetchAll = (urls: string[]) => `
import urllib.request, urllib.error
for url in ${JSON.stringify(urls)}:
    try:
        with urllib.request.urlopen(url, timeout=20) as r:
            print(r.status, len(r.read()))
    except urllib.error.HTTPError as e:
        print(e.code)
`;

describe("N-4 a conversation draws one network row per host a python step reached", () => {
  it("sums an allowed host's connections and bytes into one 'used network' row and a refused host's into one 'blocked network' row, before the output", { timeout: TEST_TIMEOUT_MS }, async () => {
    expect(session.network.egress).toBeDefined();
    const good = `http://127.0.0.2:${allowed.port}/a`;
    const bad = `http://127.0.0.3:${other.port}/b`;
    const rows = await turn(call(fetchAll([good, bad, good, good, bad])));
    expect(rows.map((row) => row.kind)).toEqual(["user", "code", "network", "network", "output", "assistant"]);
    const [used, blocked] = rows.filter((row) => row.kind === "network");
    expect(used).toMatchObject({ kind: "network", host: "127.0.0.2", decision: "allowed", connections: 3, rule: `network.allow 127.0.0.2:${allowed.port}`, reason: null });
    const bytes = (used as { bytes: number }).bytes;
    // Three bodies down (a forwarded request counts bodies; a tunnel, every byte): at least the bodies, less than twice them.
    expect(bytes).toBeGreaterThanOrEqual(3 * BODY.length);
    expect(bytes).toBeLessThan(6 * BODY.length);
    expect(used!.kind === "network" && used!.text).toBe(`used network 127.0.0.2 · 3 connections · ${humanSize(bytes)}`);
    expect(blocked).toMatchObject({ kind: "network", host: "127.0.0.3", decision: "denied", connections: 2, bytes: 0, rule: null, reason: "not in network.allow" });
    expect(blocked!.kind === "network" && blocked!.text).toBe("blocked network 127.0.0.3 · 2 connections (not in network.allow)");
    expect(rows.find((row) => row.kind === "output")).toMatchObject({ text: `200 ${BODY.length}\n403\n200 ${BODY.length}\n200 ${BODY.length}\n403\n` });
  });

  it("draws one row for a single refusal, worded as the spec shows it, and none for a step that reached nothing", { timeout: TEST_TIMEOUT_MS }, async () => {
    const rows = await turn(call(fetchAll([`http://127.0.0.3:${other.port}/once`])), call("print('quiet')"));
    const network = rows.filter((row) => row.kind === "network");
    expect(network).toHaveLength(1);
    expect(network[0]!.kind === "network" && network[0]!.text).toBe("blocked network 127.0.0.3 (not in network.allow)");
    // The second step (print) drew its code and output rows only.
    expect(rows.map((row) => row.kind)).toEqual(["user", "code", "network", "output", "code", "output", "assistant"]);
  });

  it(`draws at most MAX_NETWORK_ROWS_PER_STEP (${MAX_NETWORK_ROWS_PER_STEP}) rows, the further hosts summed in one notice`, { timeout: TEST_TIMEOUT_MS }, async () => {
    const extra = 3;
    const urls = Array.from({ length: MAX_NETWORK_ROWS_PER_STEP + extra }, (_, index) => `http://127.0.1.${index + 1}:9/`);
    const rows = await turn(call(fetchAll(urls)));
    const network = rows.filter((row) => row.kind === "network");
    expect(network).toHaveLength(MAX_NETWORK_ROWS_PER_STEP);
    expect(network[0]).toMatchObject({ host: "127.0.1.1", decision: "denied" });
    expect(rows.find((row) => row.kind === "notice")).toMatchObject({ text: expect.stringContaining(`network: ${extra} more connections to ${extra} more hosts (past MAX_NETWORK_ROWS_PER_STEP = ${MAX_NETWORK_ROWS_PER_STEP})`) });
  });
});
