/**
 * MCP servers of a daemon session (M-2, D-2): a real daemon process starts the servers its global
 * settings configure for each session; the session resource lists each with its status and what
 * went wrong (a server that exits at once), never a secret; a cell calls a running one.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call } from "./support/daemon.js";
import { daemonFixture } from "./support/fixture.js";
import { EVERYTHING, raw } from "../mcp/support.js";
import { poll } from "../support/poll.js";

const fixture = daemonFixture();
const SECRET = "daemon-mcp-secret-91c2";

describe("M-2 D-2 a daemon session's MCP servers", () => {
  it("are on the session resource with status and diagnostics, and a cell calls a running one", async () => {
    writeFileSync(join(fixture.dirs.state, "settings.json"), JSON.stringify({ mcp: { servers: {
      everything: { command: EVERYTHING, env: { TOKEN: { from_env: "DAEMON_MCP_SECRET" } } },
      broken: raw("exit"),
    } } }));
    const daemon = await fixture.start([], { ...process.env, DAEMON_MCP_SECRET: SECRET });
    const created = await call(daemon, "POST", "/sessions", { workspace: fixture.dirs.workspace });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const mcpOf = async () => (await call(daemon, "GET", `/sessions/${id}`)).body.composition.extensions.mcp;
    await poll(async () => (await mcpOf()).servers.every((server: { status: string }) => server.status !== "starting"), { what: "the servers to settle" });
    const mcp = await mcpOf();
    expect(mcp).toMatchObject({ enabled: true, depends_on: ["python"], routes: ["mcp.call", "mcp.catalog", "mcp.describe", "mcp.read", "mcp.servers", "mcp.tools"] });
    expect(mcp.servers).toEqual([
      { name: "broken", origin: "global", status: "failed", tools: 0, diagnostics: expect.arrayContaining([expect.stringContaining("raw server: cannot start, missing configuration")]) },
      { name: "everything", origin: "global", status: "running", tools: expect.any(Number), diagnostics: [] },
    ]);
    const ran = await call(daemon, "POST", `/sessions/${id}/execute`, { code: "print(await mcp.everything.echo(message='via the daemon'))" });
    expect(ran.status).toBe(200);
    expect(JSON.stringify(ran.body)).toContain("Echo: via the daemon");
    expect(JSON.stringify(await call(daemon, "GET", `/sessions/${id}`))).not.toContain(SECRET);
  });
});

describe("M-2 D-2 shared servers", () => {
  it("two sessions share one process for an entry marked shared, and each has its own for one that is not", async () => {
    writeFileSync(join(fixture.dirs.state, "settings.json"), JSON.stringify({ mcp: { servers: { common: raw("normal", { shared: true }), own: raw("normal") } } }));
    const daemon = await fixture.start();
    const pids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const created = await call(daemon, "POST", "/sessions", { workspace: fixture.dirs.workspace });
      expect(created.status).toBe(201);
      const ran = await call(daemon, "POST", `/sessions/${created.body.id}/execute`, { code: "print(await mcp.common.pid(), await mcp.own.pid())" });
      pids.push(JSON.stringify(ran.body).match(/"(\d+) (\d+)\\n"/)![0]);
    }
    const [first, second] = pids.map((text) => text.match(/\d+/g)!);
    expect(second![0]).toBe(first![0]);
    expect(second![1]).not.toBe(first![1]);
  });
});
