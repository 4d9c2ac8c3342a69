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
import { hostPlaces } from "./support.js";

const temps = tempDirs("alb-mcp-trust-");
afterEach(() => temps.cleanup());

const tool: McpServerEntry = { command: "node", args: ["server.js"] };
/** What the resolution needs of the host: node on PATH. */
const HOST = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
const section = (entries: Record<string, McpServerEntry>): McpSection => ({ servers: entries });

async function setup() {
  const state = temps.make();
  const workspace = temps.make();
  return { state, workspace, approvals: await McpApprovals.load(state, workspace), ...hostPlaces(temps, workspace) };
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
    const workspace = temps.make();
    const resolved = resolveServers({ ...hostPlaces(temps, workspace), project: section({ tool }), workspace, approvals: fifo, env: {} });
    expect(resolved.servers).toEqual([]);
    expect(resolved.diagnostics.map((item) => item.message)).toEqual(expect.arrayContaining([fifo.problem]));
  });
});

describe("M-1 the servers a session starts", () => {
  it("starts global entries as configured, and a project entry only once that exact entry is approved", async () => {
    const places = await setup();
    const { workspace, approvals } = places;
    const input = { ...places, global: section({ g: tool }), project: section({ p: tool }), env: HOST };
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
    const places = await setup();
    const { workspace, approvals } = places;
    const project: McpServerEntry = { command: "sh", args: ["-c", "curl evil"] };
    const input = { ...places, global: section({ tool }), project: section({ tool: project }), env: HOST };
    const first = resolveServers(input);
    expect(first.servers).toEqual([expect.objectContaining({ name: "tool", origin: "global", entry: tool })]);
    expect(first.diagnostics[0]!.message).toMatch(/the global entry runs; run `albedo mcp approve tool`/);
    await approvals.approve("tool", project, workspace);
    expect(resolveServers(input).servers).toEqual([expect.objectContaining({ name: "tool", origin: "project", entry: project })]);
    // The same entry in both files runs as the global one, no approval needed.
    expect(resolveServers({ ...input, project: section({ tool }) }).servers).toEqual([expect.objectContaining({ origin: "global" })]);
  });

  it("enabled: false (or a pasted disabled: true) is listed as disabled and not started", async () => {
    const places = await setup();
    const resolved = resolveServers({ ...places, global: section({ a: { ...tool, enabled: false }, b: { ...tool, disabled: true } }), env: {} });
    expect(resolved.servers).toEqual([]);
    expect(resolved.inactive.map((item) => [item.name, item.status])).toEqual([["a", "disabled"], ["b", "disabled"]]);
  });

  it("a global stdio server's environment is the minimal base plus its entry and the workspace, secrets read from the named variables; it starts in its cwd, its command absolute", async () => {
    const places = await setup();
    const bin = temps.make();
    writeFileSync(join(bin, "srv"), "#!/bin/sh\n", { mode: 0o755 });
    const env = { PATH: bin, HOME: "/home/u", OPENAI_API_KEY: "sk-daemon-secret", GH: "ghp_secretvalue" };
    const cwd = temps.make();
    const entry: McpServerEntry = { command: "srv", env: { TOKEN: { from_env: "GH" }, MODE: "x" }, cwd };
    const [server] = resolveServers({ ...places, global: section({ gh: entry }), env }).servers;
    expect(server!.launch).toEqual({
      kind: "stdio", command: join(bin, "srv"), args: [], cwd,
      env: { PATH: bin, HOME: "/home/u", TOKEN: "ghp_secretvalue", MODE: "x", ALBEDO_WORKSPACE: places.workspace },
    });
    expect(server!.secrets).toEqual(["ghp_secretvalue"]);
    expect(MCP_BASE_ENV).not.toContain("OPENAI_API_KEY");
  });

  it("an unset from_env variable is a diagnostic naming the variable, never a value; the server is failed", async () => {
    const places = await setup();
    const entry: McpServerEntry = { url: "https://h/mcp", headers: { Authorization: { from_env: "MISSING_TOKEN" }, "X-Other": { from_env: "SET_ONE" } } };
    const resolved = resolveServers({ ...places, global: section({ web: entry }), env: { SET_ONE: "visible-nowhere-1234" } });
    expect(resolved.servers).toEqual([]);
    expect(resolved.inactive).toEqual([expect.objectContaining({ name: "web", status: "failed" })]);
    expect(resolved.diagnostics).toEqual([{ server: "web", message: "web cannot start: environment variable MISSING_TOKEN (for headers.Authorization) is not set" }]);
    expect(JSON.stringify(resolved)).not.toContain("visible-nowhere-1234");
  });

  it("every header value of an HTTP server counts as a secret", async () => {
    const places = await setup();
    mkdirSync(join(places.workspace, "x"));
    const [server] = resolveServers({ ...places, global: section({ web: { url: "https://h/mcp", headers: { "X-Key": "literal-key", Authorization: { from_env: "T" } } } }), env: { T: "Bearer abcdefgh12" } }).servers;
    expect(server!.launch).toEqual({ kind: "http", url: "https://h/mcp", headers: { "X-Key": "literal-key", Authorization: "Bearer abcdefgh12" } });
    expect(server!.secrets).toEqual(expect.arrayContaining(["literal-key", "Bearer abcdefgh12"]));
  });
});

describe("C2 M-1 a global server never starts from, or runs a file from, where the session's kernel can write", () => {
  async function global(entry: McpServerEntry, env: NodeJS.ProcessEnv = HOST) {
    const places = await setup();
    const resolved = resolveServers({ ...places, global: section({ s: entry }), env });
    return { ...places, resolved, diagnostic: resolved.diagnostics.map((item) => item.message).join("\n") };
  }

  it("starts in a neutral directory outside the workspace, with the workspace as ${workspace} and ALBEDO_WORKSPACE", async () => {
    const { resolved, workspace, neutralDir } = await global({ command: "node", args: ["--root", "${workspace}/data"] });
    const launch = resolved.servers[0]!.launch;
    expect(launch).toMatchObject({ kind: "stdio", cwd: neutralDir, args: ["--root", `${workspace}/data`] });
    expect(launch.kind === "stdio" && launch.env.ALBEDO_WORKSPACE).toBe(workspace);
    expect(neutralDir.startsWith(workspace)).toBe(false);
  });

  it("refuses a cwd, a command or a script in the workspace, and a search path there; drops workspace entries from PATH", async () => {
    const places = await setup();
    const bin = join(places.workspace, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "tool"), "#!/bin/sh\n", { mode: 0o755 });
    writeFileSync(join(places.workspace, "server.py"), "print(1)\n");
    const cases: [McpServerEntry, NodeJS.ProcessEnv, RegExp][] = [
      [{ command: "node", cwd: places.workspace }, HOST, /its cwd .* lies where the session's kernel can write/],
      [{ command: join(bin, "tool") }, HOST, /its command .*bin\/tool lies where the session's kernel can write/],
      [{ command: "tool" }, { PATH: `${bin}:${HOST.PATH}` }, /its command tool is not found on PATH \(without the places the session's kernel can write\)/],
      [{ command: "python3", args: [join(places.workspace, "server.py")] }, HOST, /its argument .*server\.py is a file where the session's kernel can write/],
      [{ command: "python3", args: ["${workspace}/server.py"] }, HOST, /its argument .*server\.py is a file where the session's kernel can write/],
      [{ command: "python3", env: { PYTHONPATH: `/usr/lib:${places.workspace}` } }, HOST, /its env PYTHONPATH names .* where the session's kernel can write/],
      [{ command: "node", env: { NODE_OPTIONS: `--require=${places.workspace}/x.js` } }, HOST, /its env NODE_OPTIONS names/],
      [{ command: "node", cwd: "relative" }, HOST, /its cwd relative must be an absolute path/],
    ];
    for (const [entry, env, message] of cases) {
      const resolved = resolveServers({ ...places, global: section({ s: entry }), env });
      expect(resolved.servers, JSON.stringify(entry)).toEqual([]);
      expect(resolved.diagnostics.map((item) => item.message).join("\n")).toMatch(message);
    }
    // A workspace entry on PATH is skipped, not fatal: the command is found further on.
    const found = resolveServers({ ...places, global: section({ s: { command: "node" } }), env: { PATH: `${bin}:.:${HOST.PATH}` } }).servers[0]!.launch;
    expect(found.kind === "stdio" && found.env.PATH).toBe(HOST.PATH.split(":").filter((dir) => dir.startsWith("/")).join(":"));
  });

  it("a link in the workspace on the way to a command elsewhere counts as the kernel's, and so does a home the workspace holds", async () => {
    const places = await setup();
    const elsewhere = temps.make();
    writeFileSync(join(elsewhere, "real-tool"), "#!/bin/sh\n", { mode: 0o755 });
    symlinkSync(join(elsewhere, "real-tool"), join(places.workspace, "hop"));
    const outside = temps.make();
    symlinkSync(join(places.workspace, "hop"), join(outside, "tool"));
    const viaLink = resolveServers({ ...places, global: section({ s: { command: join(outside, "tool") } }), env: HOST });
    expect(viaLink.diagnostics.map((item) => item.message).join("\n")).toMatch(/its command .* lies where the session's kernel can write/);
    const homeInside = resolveServers({ ...places, global: section({ s: { command: "node" } }), env: { ...HOST, HOME: places.workspace } }).servers[0]!.launch;
    expect(homeInside.kind === "stdio" && homeInside.env.HOME).toBe(places.neutralDir);
  });
});

describe("C2 M-1 an approval binds the workspace files its entry runs", () => {
  it("a changed script, a changed module of a -m package, or a FIFO in the script's place needs a new approval; the check never blocks", async () => {
    const { workspace, approvals } = await setup();
    mkdirSync(join(workspace, "tools"));
    writeFileSync(join(workspace, "tools", "server.py"), "print('v1')\n");
    mkdirSync(join(workspace, "pkg"));
    writeFileSync(join(workspace, "pkg", "__init__.py"), "");
    writeFileSync(join(workspace, "pkg", "__main__.py"), "print('main')\n");
    const script: McpServerEntry = { command: "python3", args: ["tools/server.py"] };
    const module: McpServerEntry = { command: "python3", args: ["-m", "pkg"] };
    expect(await approvals.approve("script", script, workspace)).toEqual(["tools/server.py"]);
    expect(await approvals.approve("module", module, workspace)).toEqual(["pkg/__init__.py", "pkg/__main__.py"]);
    expect(approvals.isApproved("script", script, workspace)).toBe(true);
    expect(approvals.isApproved("module", module, workspace)).toBe(true);
    writeFileSync(join(workspace, "pkg", "__main__.py"), "print('planted')\n");
    expect(approvals.check("module", module, workspace)).toEqual({ approved: false, why: expect.stringContaining("the workspace files it runs changed since it was approved") });
    execFileSync("rm", [join(workspace, "tools", "server.py")]);
    execFileSync("mkfifo", [join(workspace, "tools", "server.py")]);
    expect(approvals.isApproved("script", script, workspace)).toBe(false);
  });
});
