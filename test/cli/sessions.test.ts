/**
 * `albedo sessions` (D-2): the sessions a running daemon holds, each with who opened it, its
 * kernel's status, its age and its workspace, through the real binary and a real daemon whose
 * sessions were opened the ways clients open them: the plain API, the web console's body, and an
 * MCP client at /mcp.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call } from "../daemon/support/daemon.js";
import { daemonFixture } from "../daemon/support/fixture.js";
import { runAlbedo } from "../support/cli.js";

const fixture = daemonFixture();

function albedo(args: readonly string[]) {
  return runAlbedo(args, { cwd: fixture.dirs.workspace, env: { ...process.env, HOME: fixture.dirs.home, ALBEDO_HOME: fixture.dirs.state, NO_COLOR: "1" } });
}

/** An MCP client's initialize at the daemon's /mcp, as any client sends it. */
async function mcpInitialize(daemon: { url: string; token: string }, workspace: string): Promise<void> {
  const answer = await fetch(`${daemon.url}/mcp?workspace=${encodeURIComponent(workspace)}`, {
    method: "POST",
    headers: { authorization: `Bearer ${daemon.token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }),
  });
  expect(answer.status).toBe(200);
  await answer.text();
}

describe("D-2 X albedo sessions", () => {
  it("with no daemon running says so, and lists nothing", async () => {
    const ran = await albedo(["sessions"]);
    expect(ran).toMatchObject({ code: 0, stdout: `no daemon runs for ${fixture.dirs.state}, so no sessions are open (a console or chat without a daemon runs its session inside itself; \`albedo serve\` starts a daemon)\n` });
    expect(JSON.parse((await albedo(["sessions", "--json"])).stdout)).toEqual({ daemon: null, state_dir: fixture.dirs.state, sessions: [] });
  });

  it("lists every session of the daemon with its client, kernel status, age and workspace", { timeout: 180_000 }, async () => {
    const daemon = await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    expect((await albedo(["sessions"])).stdout).toBe(`no sessions are open on the daemon at ${daemon.url}\n`);
    // A path wider than its column keeps its end, where two sessions' paths differ.
    const other = join((await fixture.makeDirs()).workspace, "a-directory-name-long-enough-to-push-the-path-past-eighty-columns", "project-two");
    await mkdir(other, { recursive: true });
    const api = (await call(daemon, "POST", "/sessions", { workspace: fixture.dirs.workspace })).body;
    const web = (await call(daemon, "POST", "/sessions", { workspace: other, client: "web" })).body;
    expect([api.client, web.client]).toEqual(["api", "web"]);
    expect(Date.parse(web.opened_at)).toBeGreaterThanOrEqual(Date.parse(api.opened_at));
    await mcpInitialize(daemon, fixture.dirs.workspace);
    expect((await call(daemon, "POST", "/sessions", { workspace: other, client: "terminal" })).body).toMatchObject({ status: 400, code: "invalid_body" });

    const listed = JSON.parse((await albedo(["sessions", "--json"])).stdout);
    expect(listed.daemon).toBe(daemon.url);
    const byClient = Object.fromEntries(listed.sessions.map((s: { client: string }) => [s.client, s]));
    expect(Object.keys(byClient).sort()).toEqual(["api", "mcp", "web"]);
    expect(byClient.api).toEqual({ id: api.id, workspace: fixture.dirs.workspace, client: "api", kernel: expect.stringMatching(/^(starting|ready|idle|busy)$/), opened_at: api.opened_at, age_s: expect.any(Number) });
    expect(byClient.web).toMatchObject({ id: web.id, workspace: other });
    expect(byClient.mcp).toMatchObject({ workspace: fixture.dirs.workspace });

    const table = (await albedo(["sessions"])).stdout.split("\n");
    expect(table[0]).toMatch(/^ID +CLIENT +KERNEL +AGE +WORKSPACE$/);
    const webLine = table.find((line) => line.startsWith(web.id))!;
    expect(webLine).toMatch(new RegExp(`^${web.id} +web +(ready|idle|busy|starting) +\\d+ s +…\\S+/project-two$`));
    expect(webLine.length).toBeLessThanOrEqual(80);
    expect(table.at(-2)).toBe(`3 on the daemon at ${daemon.url}`);
  });
});
