/**
 * Trust in configured servers (M-1): approvals of project entries in the state dir, keyed by
 * workspace, name and the entry's hash, and which entries one session starts with what.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { entryHash, MCP_APPROVALS_FILE, MCP_BASE_ENV, McpApprovals, resolveServers, type McpSection, type McpServerEntry } from "../../src/mcp/index.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("alb-mcp-trust-");
afterEach(() => temps.cleanup());

const tool: McpServerEntry = { command: "node", args: ["server.js"] };
const section = (entries: Record<string, McpServerEntry>): McpSection => ({ servers: entries });

async function setup() {
  const state = temps.make();
  const workspace = temps.make();
  return { state, workspace, approvals: await McpApprovals.load(state, workspace) };
}

describe("M-1 approvals of project servers", () => {
  it("entryHash is the sha256 of the canonical JSON: key order does not matter, any change does", () => {
    expect(entryHash({ command: "a", args: ["b"] })).toBe(entryHash({ args: ["b"], command: "a" } as McpServerEntry));
    expect(entryHash({ command: "a", args: ["b"] })).not.toBe(entryHash({ command: "a", args: ["c"] }));
    expect(entryHash(tool)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("records the exact entry in <stateDir>/mcp-approvals.json (0600), read again by a later load", async () => {
    const { state, workspace, approvals } = await setup();
    await approvals.approve("tool", tool);
    const file = join(state, MCP_APPROVALS_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8")).approvals).toEqual([expect.objectContaining({ name: "tool", hash: entryHash(tool) })]);
    const again = await McpApprovals.load(state, workspace);
    expect(again.isApproved("tool", tool)).toBe(true);
    expect(again.isApproved("tool", { ...tool, args: ["other.js"] })).toBe(false);
    expect(again.isApproved("other", tool)).toBe(false);
    expect(await again.revoke("tool")).toBe(true);
    expect((await McpApprovals.load(state, workspace)).isApproved("tool", tool)).toBe(false);
  });

  it("an approval holds in its workspace only, reached by a symlink too", async () => {
    const { state, workspace, approvals } = await setup();
    await approvals.approve("tool", tool);
    const link = join(temps.make(), "link");
    symlinkSync(workspace, link);
    expect(approvals.isApproved("tool", tool, link)).toBe(true);
    expect(approvals.isApproved("tool", tool, temps.make())).toBe(false);
    expect((await McpApprovals.load(state, link)).isApproved("tool", tool)).toBe(true);
  });

  it("two processes approving at once both land (the file is rewritten under its lock)", async () => {
    const { state, workspace } = await setup();
    const [a, b] = await Promise.all([McpApprovals.load(state, workspace), McpApprovals.load(state, workspace)]);
    await Promise.all([a.approve("one", tool), b.approve("two", tool)]);
    const names = (await McpApprovals.load(state, workspace)).approvals().map((record) => record.name);
    expect(names).toEqual(["one", "two"]);
  });

  it("B a broken, oversized or FIFO approvals file approves nothing and says why", async () => {
    const state = temps.make();
    writeFileSync(join(state, MCP_APPROVALS_FILE), "{not json");
    expect((await McpApprovals.load(state)).problem).toMatch(/is not an approvals file; no project server counts as approved/);
    const fifoState = temps.make();
    execFileSync("mkfifo", [join(fifoState, MCP_APPROVALS_FILE)]);
    const fifo = await McpApprovals.load(fifoState);
    expect(fifo.problem).toMatch(/no project server counts as approved/);
    const resolved = resolveServers({ project: section({ tool }), workspace: temps.make(), approvals: fifo, env: {} });
    expect(resolved.servers).toEqual([]);
    expect(resolved.diagnostics.map((item) => item.message)).toEqual(expect.arrayContaining([fifo.problem]));
  });
});

describe("M-1 the servers a session starts", () => {
  it("starts global entries as configured, and a project entry only once that exact entry is approved", async () => {
    const { workspace, approvals } = await setup();
    const input = { global: section({ g: tool }), project: section({ p: tool }), workspace, approvals, env: {} };
    const before = resolveServers(input);
    expect(before.servers.map((server) => [server.name, server.origin])).toEqual([["g", "global"]]);
    expect(before.inactive).toEqual([expect.objectContaining({ name: "p", origin: "project", status: "disabled" })]);
    expect(before.diagnostics).toEqual([{ server: "p", message: expect.stringContaining("`albedo mcp approve p`") }]);
    await approvals.approve("p", tool, workspace);
    expect(resolveServers(input).servers.map((server) => [server.name, server.origin])).toEqual([["g", "global"], ["p", "project"]]);
    const changed = resolveServers({ ...input, project: section({ p: { ...tool, args: ["evil.js"] } }) });
    expect(changed.servers.map((server) => server.name)).toEqual(["g"]);
  });

  it("a project entry named like a global one: the global entry stands until the project one is approved", async () => {
    const { workspace, approvals } = await setup();
    const project: McpServerEntry = { command: "sh", args: ["-c", "curl evil"] };
    const input = { global: section({ tool }), project: section({ tool: project }), workspace, approvals, env: {} };
    const first = resolveServers(input);
    expect(first.servers).toEqual([expect.objectContaining({ name: "tool", origin: "global", entry: tool })]);
    expect(first.diagnostics[0]!.message).toMatch(/the global entry runs; run `albedo mcp approve tool`/);
    await approvals.approve("tool", project, workspace);
    expect(resolveServers(input).servers).toEqual([expect.objectContaining({ name: "tool", origin: "project", entry: project })]);
    // The same entry in both files runs as the global one, no approval needed.
    expect(resolveServers({ ...input, project: section({ tool }) }).servers).toEqual([expect.objectContaining({ origin: "global" })]);
  });

  it("enabled: false (or a pasted disabled: true) is listed as disabled and not started", async () => {
    const { workspace, approvals } = await setup();
    const resolved = resolveServers({ global: section({ a: { ...tool, enabled: false }, b: { ...tool, disabled: true } }), workspace, approvals, env: {} });
    expect(resolved.servers).toEqual([]);
    expect(resolved.inactive.map((item) => [item.name, item.status])).toEqual([["a", "disabled"], ["b", "disabled"]]);
  });

  it("a stdio server's environment is the minimal base plus its entry, secrets read from the named variables", async () => {
    const { workspace, approvals } = await setup();
    const env = { PATH: "/usr/bin", HOME: "/home/u", OPENAI_API_KEY: "sk-daemon-secret", GH: "ghp_secretvalue" };
    const entry: McpServerEntry = { command: "srv", env: { TOKEN: { from_env: "GH" }, MODE: "x" }, cwd: "sub" };
    const [server] = resolveServers({ global: section({ gh: entry }), workspace, approvals, env }).servers;
    expect(server!.launch).toEqual({ kind: "stdio", command: "srv", args: [], env: { PATH: "/usr/bin", HOME: "/home/u", TOKEN: "ghp_secretvalue", MODE: "x" }, cwd: join(workspace, "sub") });
    expect(server!.secrets).toEqual(["ghp_secretvalue"]);
    expect(MCP_BASE_ENV).not.toContain("OPENAI_API_KEY");
  });

  it("an unset from_env variable is a diagnostic naming the variable, never a value; the server is failed", async () => {
    const { workspace, approvals } = await setup();
    const entry: McpServerEntry = { url: "https://h/mcp", headers: { Authorization: { from_env: "MISSING_TOKEN" }, "X-Other": { from_env: "SET_ONE" } } };
    const resolved = resolveServers({ global: section({ web: entry }), workspace, approvals, env: { SET_ONE: "visible-nowhere-1234" } });
    expect(resolved.servers).toEqual([]);
    expect(resolved.inactive).toEqual([expect.objectContaining({ name: "web", status: "failed" })]);
    expect(resolved.diagnostics).toEqual([{ server: "web", message: "web cannot start: environment variable MISSING_TOKEN (for headers.Authorization) is not set" }]);
    expect(JSON.stringify(resolved)).not.toContain("visible-nowhere-1234");
  });

  it("every header value of an HTTP server counts as a secret", async () => {
    const { workspace, approvals } = await setup();
    mkdirSync(join(workspace, "x"));
    const [server] = resolveServers({ global: section({ web: { url: "https://h/mcp", headers: { "X-Key": "literal-key", Authorization: { from_env: "T" } } } }), workspace, approvals, env: { T: "Bearer abcdefgh12" } }).servers;
    expect(server!.launch).toEqual({ kind: "http", url: "https://h/mcp", headers: { "X-Key": "literal-key", Authorization: "Bearer abcdefgh12" } });
    expect(server!.secrets).toEqual(expect.arrayContaining(["literal-key", "Bearer abcdefgh12"]));
  });
});
