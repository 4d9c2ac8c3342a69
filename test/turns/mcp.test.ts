/**
 * MCP servers in a turn (M-4, M-5): message[0] carries the bounded `<mcp_servers>` block and the
 * manual's words about MCP only when servers are configured; tool mode offers each allowed tool as
 * `mcp__SERVER__TOOL`; every call, from the model's code or as a function tool, draws an `mcp` row.
 * A real session with real servers, against the local OpenAI-compatible test server.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ModelAdapter } from "../../src/model/index.js";
import type { Session } from "../../src/session/index.js";
import { installDir } from "../../src/platform/index.js";
import { loadPrompts, type ToolMode } from "../../src/turns/context.js";
import { EMPTY_CONVERSATION } from "../../src/turns/conversation.js";
import { MAX_MCP_FUNCTION_TOOLS, MCP_TOOLS_IN_CONTEXT } from "../../src/turns/mcpContext.js";
import type { TranscriptRow } from "../../src/turns/rows.js";
import { runTurn } from "../../src/turns/runner.js";
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from "../model/fakeOpenAI.js";
import { openaiAdapter } from "../model/support.js";
import { EVERYTHING, raw } from "../mcp/support.js";
import { openSession, sessionDirs, type SessionDirs } from "../session/fixtures.js";

const prompts = loadPrompts(installDir());
let server: FakeOpenAI;
let adapter: ModelAdapter;
const opened: { session: Session; dirs: SessionDirs }[] = [];

async function sessionWith(servers: Record<string, unknown> | undefined): Promise<Session> {
  const dirs = await sessionDirs();
  if (servers) writeFileSync(join(dirs.stateDir, "settings.json"), JSON.stringify({ mcp: { servers } }));
  const session = await openSession(dirs);
  opened.push({ session, dirs });
  return session;
}

let withMcp: Session;
let without: Session;
let many: Session;

beforeAll(async () => {
  server = await startFakeOpenAI();
  adapter = await openaiAdapter(server);
  [withMcp, without, many] = await Promise.all([
    sessionWith({ everything: { command: EVERYTHING }, raw: raw("normal", { tools: { deny: ["secret", "b*"] } }) }),
    sessionWith(undefined),
    sessionWith({ many: raw("many") }),
  ]);
});

afterAll(async () => {
  for (const { session, dirs } of opened.splice(0)) {
    await session.close();
    await dirs.cleanup();
  }
  await server?.close();
});

beforeEach(() => void (server.requests.length = 0));

const call = (name: string, args: unknown): FakeReply => ({ kind: "reply", toolCalls: [{ id: `call_${name}`, name, arguments: JSON.stringify(args) }] });
const prose = (text: string): FakeReply => ({ kind: "reply", text });

async function turn(session: Session, mode: ToolMode, replies: FakeReply[]): Promise<TranscriptRow[]> {
  server.enqueue(...replies);
  const rows: TranscriptRow[] = [];
  await runTurn(
    { turnId: `t${Math.random()}`, visibleText: "go", modelInput: "go" },
    EMPTY_CONVERSATION,
    { adapter, mode, contextTokens: 32_768, prompts, host: session, emit: (row) => rows.push(row) },
    new AbortController().signal,
  );
  return rows;
}

const system = (index = 0) => (server.requests[index]!.body.messages as { content: string }[])[0]!.content;
const toolNames = (index = 0) => ((server.requests[index]!.body.tools ?? []) as { function: { name: string } }[]).map((tool) => tool.function.name);

describe("M-4 the <mcp_servers> block in message[0]", () => {
  it("lists each running server's allowed tools by qualified name, one line each, with the words on how to call them", async () => {
    await turn(withMcp, "code", [prose("done")]);
    const text = system();
    expect(text).toContain("# MCP tools");
    const block = text.slice(text.lastIndexOf("<mcp_servers>"), text.lastIndexOf("</mcp_servers>"));
    expect(block).toContain('<server name="everything"');
    expect(block).toContain("everything.echo - Echoes back the input string\n");
    // A description is its first line; denied tools are not there.
    expect(block).toContain("raw.ok - Says ok.\n");
    expect(block).not.toMatch(/raw\.(secret|big|bad_schema)\b/);
    // Code mode: the tools are reached from Python, not offered as function tools.
    expect(toolNames()).toEqual(["python"]);
  });

  it("says how many more tools a server has past the bound, and how to list them", async () => {
    await turn(many, "code", [prose("done")]);
    const block = system().split("<mcp_servers>").at(-1)!;
    const listed = block.split("\n").filter((line) => line.startsWith("many.t"));
    expect(listed).toHaveLength(MCP_TOOLS_IN_CONTEXT);
    expect(block).toMatch(new RegExp(`\\((\\d+) more: \`await mcp\\.tools\\("many"\\)\` lists them\\)`));
  });

  it("is absent, with no word about MCP and no MCP tools, when no server is configured", async () => {
    await turn(without, "tool", [prose("done")]);
    expect(system()).not.toMatch(/\bMCP\b|mcp\.|mcp__|<mcp_servers>/);
    expect(toolNames().some((name) => name.startsWith("mcp__"))).toBe(false);
  });
});

describe("M-4 M-5 tool mode and mcp rows", () => {
  it("offers mcp__SERVER__TOOL with the tool's schema; a call answers the model and draws a row via tool", async () => {
    const rows = await turn(withMcp, "tool", [call("mcp__everything__echo", { message: "hi" }), call("mcp__everything__echo", { message: 5 }), prose("done")]);
    const tools = server.requests[0]!.body.tools as { function: { name: string; parameters: Record<string, unknown> } }[];
    const echo = tools.find((tool) => tool.function.name === "mcp__everything__echo")!;
    expect(echo.function.parameters).toMatchObject({ type: "object", properties: { message: { type: "string" } }, required: ["message"] });
    expect(toolNames()).toContain("mcp__raw__my-tool");
    expect(toolNames()).not.toContain("mcp__raw__secret");
    const results = (index: number) => (server.requests[index]!.body.messages as { role: string; content: string }[]).filter((m) => m.role === "tool").map((m) => m.content);
    expect(results(1)).toEqual(["Echo: hi"]);
    expect(results(2)[1]).toMatch(/^Error: everything\.echo: .*\/message: must be string/);
    const mcpRows = rows.filter((row) => row.kind === "mcp");
    expect(mcpRows[0]).toMatchObject({ kind: "mcp", server: "everything", tool: "echo", via: "tool", is_error: false, text: expect.stringMatching(/^used everything\.echo · \d+ B$/) });
    expect(mcpRows[1]).toMatchObject({ via: "tool", is_error: true });
  });

  it("offers at most MAX_MCP_FUNCTION_TOOLS function tools however many a server lists", async () => {
    await turn(many, "tool", [prose("done")]);
    const names = toolNames();
    expect(names.filter((name) => name.startsWith("mcp__many__"))).toHaveLength(MAX_MCP_FUNCTION_TOOLS);
    expect(names).toContain("python");
  });

  it("draws a row via python for each call the model's code makes", async () => {
    const rows = await turn(withMcp, "code", [call("python", { code: "for word in ('a', 'b'):\n    print(await mcp.everything.echo(message=word))" }), prose("done")]);
    expect(rows.filter((row) => row.kind === "mcp").map((row) => row.kind === "mcp" && [row.tool, row.via])).toEqual([["echo", "python"], ["echo", "python"]]);
    expect(rows.find((row) => row.kind === "output")).toMatchObject({ text: "Echo: a\nEcho: b\n" });
  });
});
