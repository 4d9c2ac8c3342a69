/** `albedo mcp config CLIENT`: the entry each client needs, through the real binary; the printed entry starts a working server. */
import { realpathSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCP_CLIENTS } from "../../src/cli/commands/mcpClients.js";
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

  it("claude-code --scope user|project prints the whole line with the scope in its place, serving the project Claude Code runs it in", async () => {
    const local = await config(["claude-code"]);
    expect(local.stderr).toContain("`albedo mcp config claude-code --scope user` prints the line for every project");
    for (const scope of ["user", "project"]) {
      const ran = await config(["claude-code", "--scope", scope]);
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout).toBe(`claude mcp add --scope ${scope} albedo -- ${process.execPath} ${realpathSync(ALBEDO_BIN)} mcp serve\n`);
    }
    const refused = await config(["cursor", "--scope", "user"]);
    expect(refused.code).toBe(2);
    expect((await config(["claude-code", "--scope", "global"])).stderr).toContain("--scope takes local, user, project");
  });

  it("the user-scope server, started in a project as Claude Code starts it, serves that project", async () => {
    const ran = await config(["claude-code", "--scope", "user"]);
    const [command, ...args] = ran.stdout.trim().split(" -- ")[1]!.split(" ");
    const client = new Client({ name: "entry-test", version: "1" });
    await client.connect(new StdioClientTransport({ command: command!, args, cwd: dirs.workspace, env: serveEnv(dirs) as Record<string, string>, stderr: "ignore" }));
    try {
      const result = await client.callTool({ name: "python", arguments: { code: "import os; print(os.getcwd())" } });
      expect(result.content).toEqual([{ type: "text", text: `${realpathSync(dirs.workspace)}\n` }]);
    } finally {
      await client.close();
    }
  }, 120_000);

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
