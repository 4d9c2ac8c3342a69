/**
 * MCP servers from the command line (M-1): `albedo mcp add|remove` write through a real daemon's
 * settings API, `approve` records the exact project entry in the state dir, `list` says what a
 * session opened here would start. Secrets stay names: no value is stored or printed.
 */
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { ALBEDO_BIN, runAlbedo } from "../support/cli.js";
import { poll } from "../support/poll.js";
import { daemonFixture } from "../daemon/support/fixture.js";
import { EVERYTHING, raw } from "../mcp/support.js";

const fixture = daemonFixture();
const SECRET = "sk-cli-test-4242";

function albedo(args: readonly string[], extraEnv: Record<string, string> = {}) {
  return runAlbedo(args, { cwd: fixture.dirs.workspace, env: { ...process.env, HOME: fixture.dirs.home, ALBEDO_HOME: fixture.dirs.state, NO_COLOR: "1", ...extraEnv } });
}

const json = (file: string): unknown => JSON.parse(readFileSync(file, "utf8"));
const globalFile = () => join(fixture.dirs.state, "settings.json");
const projectFile = () => join(fixture.dirs.workspace, ".albedo", "settings.json");

describe("M-1 X albedo mcp add|list|remove through the daemon", () => {
  it("writes the entry other clients use, names secrets by variable, and lists what a session would start", async () => {
    await fixture.start();
    const added = await albedo(["mcp", "add", "files", "--env-from", "TOKEN=FILES_TOKEN", "--", "npx", "-y", "server-files", "/data"]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toBe(`albedo mcp add: files (npx -y server-files /data) in ${globalFile()} (global); sessions opened from now on start it (\`/reload session\` in an open one)\n`);
    expect((json(globalFile()) as { mcp: unknown }).mcp).toEqual({ servers: { files: { command: "npx", args: ["-y", "server-files", "/data"], env: { TOKEN: { from_env: "FILES_TOKEN" } } } } });

    const again = await albedo(["mcp", "add", "files", "--", "other"]);
    expect(again).toMatchObject({ code: 1, stderr: expect.stringContaining("the global settings already have a server named files; add --replace to replace it") });

    const web = await albedo(["mcp", "add", "web", "--url", "https://mcp.example.com/mcp", "--header-from", "Authorization=WEB_AUTH"]);
    expect(web.code, web.stderr).toBe(0);

    const unset = await albedo(["mcp", "list"]);
    expect(unset.stdout).toMatch(/files\s+global\s+cannot start\s+npx -y server-files \/data\n\s+reads FILES_TOKEN from the environment\n\s+files cannot start: environment variable FILES_TOKEN \(for env\.TOKEN\) is not set/);
    const set = await albedo(["mcp", "list", "--json"], { FILES_TOKEN: SECRET, WEB_AUTH: `Bearer ${SECRET}` });
    expect(JSON.parse(set.stdout).servers).toEqual([
      { name: "files", scope: "global", transport: "stdio", launch: "npx -y server-files /data", reads: ["FILES_TOKEN"], state: "starts", notes: [] },
      { name: "web", scope: "global", transport: "http", launch: "https://mcp.example.com/mcp", reads: ["WEB_AUTH"], state: "starts", notes: [] },
    ]);
    expect(set.stdout + readFileSync(globalFile(), "utf8")).not.toContain(SECRET);

    expect((await albedo(["mcp", "remove", "web"])).stdout).toBe(`albedo mcp remove: web removed from ${globalFile()} (global)\n`);
    expect(await albedo(["mcp", "remove", "web"])).toMatchObject({ code: 1, stderr: expect.stringContaining("the global settings have no server named web (they have files)") });
    await albedo(["mcp", "remove", "files"]);
    expect(json(globalFile())).not.toHaveProperty("mcp");
    expect((await albedo(["mcp", "list"])).stdout).toContain("no MCP servers configured");
  });

  it("refuses a bad name, a command and a URL together, and an option of the other transport, before writing", async () => {
    await fixture.start();
    expect(await albedo(["mcp", "add", "Bad_Name", "--", "x"])).toMatchObject({ code: 2, stderr: expect.stringContaining('server name "Bad_Name"') });
    expect(await albedo(["mcp", "add", "x", "--url", "https://a.example/mcp", "--", "cmd"])).toMatchObject({ code: 2, stderr: expect.stringContaining("give --url or a command after --, not both") });
    expect(await albedo(["mcp", "add", "x", "--url", "https://a.example/mcp", "--env-from", "A"])).toMatchObject({ code: 2, stderr: expect.stringContaining("an HTTP server takes --header-from") });
    expect(await albedo(["mcp", "add", "x"])).toMatchObject({ code: 2, stderr: expect.stringContaining("give the server's command after --") });
    // The daemon's schema judges what the CLI does not: a URL with credentials in it.
    expect(await albedo(["mcp", "add", "x", "--url", "https://user:pw@a.example/mcp"])).toMatchObject({ code: 1, stderr: expect.stringMatching(/the daemon refused: .*mcp\.servers\.x\.url.*must not carry a user name or password/) });
  });
});

describe("M-1 X albedo mcp approve", () => {
  it("lets a project entry start only once that exact entry is approved; a changed entry needs a new approval", async () => {
    await fixture.start();
    await mkdir(join(fixture.dirs.workspace, ".albedo"), { recursive: true });
    const entry = { command: "python3", args: ["tools.py"] };
    await writeFile(projectFile(), JSON.stringify({ mcp: { servers: { repo: entry } } }));
    const before = JSON.parse((await albedo(["mcp", "list", "--json"])).stdout).servers;
    expect(before).toMatchObject([{ name: "repo", scope: "project", state: "needs approval", notes: [expect.stringContaining("run `albedo mcp approve repo` in this workspace to start it")] }]);

    const approved = await albedo(["mcp", "approve", "repo"]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain("albedo mcp approve: repo approved for");
    expect(approved.stdout).toContain("  runs python3 tools.py\n");
    const approvals = json(join(fixture.dirs.state, "mcp-approvals.json")) as { approvals: { name: string }[] };
    expect(approvals.approvals.map((a) => a.name)).toEqual(["repo"]);
    expect(JSON.parse((await albedo(["mcp", "list", "--json"])).stdout).servers).toMatchObject([{ name: "repo", state: "starts" }]);

    // What a cloned repository changes after the approval is not approved.
    await writeFile(projectFile(), JSON.stringify({ mcp: { servers: { repo: { ...entry, args: ["other.py"] } } } }));
    expect(JSON.parse((await albedo(["mcp", "list", "--json"])).stdout).servers).toMatchObject([{ name: "repo", state: "needs approval" }]);

    expect((await albedo(["mcp", "approve", "repo", "--revoke"])).stdout).toContain("approval of repo withdrawn");
    expect(await albedo(["mcp", "approve", "nothere"])).toMatchObject({ code: 1, stderr: expect.stringContaining("have no server named nothere") });
  });

  it("says a global entry needs no approval", async () => {
    await fixture.start();
    await albedo(["mcp", "add", "mine", "--", "true"]);
    expect(await albedo(["mcp", "approve", "mine"])).toMatchObject({ code: 1, stderr: expect.stringContaining("mine is in the global settings, which start as configured") });
  });
});

describe("M-2 X albedo doctor starts each configured server once", () => {
  it("reports a running server with its tool count and a broken one with what it said", async () => {
    await writeFile(globalFile(), JSON.stringify({ mcp: { servers: { everything: { command: EVERYTHING }, broken: raw("exit") } } }));
    const doctor = await albedo(["doctor", "--json"]);
    const checks = (JSON.parse(doctor.stdout) as { checks: { name: string; status: string; detail: string }[] }).checks.filter((check) => check.name.startsWith("mcp "));
    expect(checks).toEqual([
      { name: "mcp broken", status: "warn", detail: expect.stringContaining("raw server: cannot start, missing configuration"), fix: expect.any(String) },
      { name: "mcp everything", status: "ok", detail: expect.stringMatching(/^running, \d+ tools$/), fix: null },
    ]);
  });
});

describe("M-4 X albedo mcp prompt", () => {
  it("prints the <mcp_servers> block a model gets, and says there is none when nothing is configured", async () => {
    await fixture.start();
    const none = await albedo(["mcp", "prompt"]);
    expect(none).toMatchObject({ code: 0, stdout: "", stderr: expect.stringContaining("no MCP servers configured, so a model gets no <mcp_servers> block") });
    await albedo(["mcp", "add", "everything", "--", EVERYTHING]);
    const printed = await albedo(["mcp", "prompt"]);
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toMatch(/^<mcp_servers>\n<server name="everything" tools="\d+">\n/);
    expect(printed.stdout).toContain("everything.echo - Echoes back the input string\n");
    expect(printed.stdout.endsWith("</server>\n</mcp_servers>\n")).toBe(true);
  });
});

describe("M-3 X albedo exec calls MCP tools", () => {
  it("runs a script file and a -c cell that await tools, in the sandboxed kernel it starts", async () => {
    await writeFile(globalFile(), JSON.stringify({ mcp: { servers: { everything: { command: EVERYTHING } } } }));
    await writeFile(join(fixture.dirs.workspace, "script.py"), "from albedo import mcp\nprint(await mcp.everything.echo(message='from a script'))\n");
    const script = await albedo(["exec", "script.py"]);
    expect(script.stdout, script.stderr).toBe("Echo: from a script\n");
    const cell = await albedo(["exec", "-c", "print(await mcp.call('everything.echo', {'message': 'from a cell'}))"]);
    expect(cell.stdout, cell.stderr).toBe("Echo: from a cell\n");
    // The server's stderr and each call go to a daemon's log; a terminal is not told of them.
    expect(cell.stderr).not.toMatch(/mcp call|stderr: Starting/);
  });
});

describe("M-2 M-3 X a server added while a console is open, then /reload session", () => {
  it("the console on the daemon gets `mcp` in its running kernel; the reload line names the server; its attribute points at mcp.call", { timeout: 180_000 }, async () => {
    await fixture.start(["--listen", "127.0.0.1:0", "--pool", "0"]);
    const shell = spawn(process.execPath, [ALBEDO_BIN, "console"], {
      cwd: fixture.dirs.workspace,
      env: { ...process.env, HOME: fixture.dirs.home, ALBEDO_HOME: fixture.dirs.state, NO_COLOR: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    shell.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    shell.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => shell.on("close", resolve));
    try {
      shell.stdin.write("kept = 41\nprint('ready', kept)\n");
      await poll(() => stdout.includes("ready 41"), { what: "the console's first cell", timeoutMs: 90_000 });
      const added = await albedo(["mcp", "add", "everything", "--", EVERYTHING]);
      expect(added.stdout).toContain("`/reload session` in an open one");
      shell.stdin.end("/reload session\nprint(await mcp.call('everything.echo', {'message': 'hi'}), kept + 1)\nmcp.everything\n");
      expect(await exited).toBe(0);
    } finally {
      shell.kill("SIGKILL");
    }
    expect(stdout).toMatch(/^reloaded: \+1 MCP server \(everything\), \d+ skills$/m);
    expect(stdout).toContain("Echo: hi 42\n");
    expect(stderr).toContain("mcp.everything: the server everything came with a `/reload session` after this kernel started");
    expect(stderr).toContain("await mcp.call('everything.TOOL', {...})");
  });
});
