/** `albedo mcp config CLIENT`: the entry each client needs, through the real binary; the printed entry starts a working server. */
import { realpathSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCP_CLIENTS } from "../../src/cli/registry.js";
import { sessionDirs, type SessionDirs } from "../session/fixtures.js";
import { ALBEDO_BIN, runAlbedo } from "../support/cli.js";
import { serveEnv } from "./support.js";

let dirs: SessionDirs;
beforeAll(async () => void (dirs = await sessionDirs()));
afterAll(() => dirs?.cleanup());

const config = (args: readonly string[]) => runAlbedo(["mcp", "config", ...args], { cwd: dirs.workspace, env: serveEnv(dirs) });

describe("X P-1 albedo mcp config", () => {
  it.each(MCP_CLIENTS)("%s: absolute paths to node, albedo and the workspace, and where the entry goes on stderr", async (client) => {
    const ran = await config([client]);
    expect(ran.code, ran.stderr).toBe(0);
    const workspace = realpathSync(dirs.workspace);
    for (const path of [process.execPath, realpathSync(ALBEDO_BIN), workspace]) expect(ran.stdout).toContain(path);
    expect(ran.stderr).toMatch(/^albedo mcp config: (add to|run this)/);
    if (client === "claude-code") expect(ran.stdout).toMatch(/^claude mcp add albedo -- \S+ \S+ mcp serve --workspace /);
    else if (client === "codex") expect(ran.stdout).toMatch(/^\[mcp_servers\.albedo\]\ncommand = ".+"\nargs = \[".+", "mcp", "serve", "--workspace", ".+"\]\n$/);
    else expect(() => JSON.parse(ran.stdout)).not.toThrow();
  });

  it("refuses an unknown client or none, listing the clients", async () => {
    for (const args of [["emacs"], []]) {
      const ran = await config(args);
      expect(ran.code).toBe(2);
      expect(ran.stderr).toContain(MCP_CLIENTS.join(", "));
    }
  });

  it("the printed entry starts a server an MCP client can use", async () => {
    const ran = await config(["claude-desktop", "--workspace", dirs.workspace]);
    const { command, args } = (JSON.parse(ran.stdout) as { mcpServers: { albedo: { command: string; args: string[] } } }).mcpServers.albedo;
    const client = new Client({ name: "entry-test", version: "1" });
    await client.connect(new StdioClientTransport({ command, args, env: serveEnv(dirs) as Record<string, string>, stderr: "ignore" }));
    try {
      const result = await client.callTool({ name: "python", arguments: { code: "print('from the entry')" } });
      expect(result.content).toEqual([{ type: "text", text: "from the entry\n" }]);
    } finally {
      await client.close();
    }
  }, 120_000);
});
