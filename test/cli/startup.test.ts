/**
 * The CLI loads a command's modules when that command runs: `albedo --version`, `albedo --help`
 * and `albedo skills list` load none of the SDKs, the native modules, the daemon (with the web
 * console's endpoints) or the MCP server. Observed by running the real binary with a preload that
 * records every module it loads: ES modules through a load hook, CommonJS ones from the require
 * cache at exit (a lazy `require` never reaches the hook).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALBEDO_BIN, runProgram } from "../support/cli.js";
import { writeSkill, roots } from "../support/skills.js";
import { tempDirs } from "../support/tempDirs.js";

/** Packages a light command must not load: each costs tens to hundreds of milliseconds and megabytes. */
const HEAVY_PACKAGES = ["openai", "@anthropic-ai/sdk", "@modelcontextprotocol/sdk", "@modelcontextprotocol/client", "better-sqlite3", "zeromq", "sharp", "ws", "@jupyterlab/services"];
/** Domains a light command must not load: the daemon and its HTTP API (the web console's too), the MCP server, sessions, turns, operations. */
const HEAVY_DOMAINS = ["daemon", "api", "mcpServer", "session", "turns", "operations"];

const HOOKS = `import { appendFileSync } from "node:fs";
export async function load(url, context, next) {
  appendFileSync(process.env.ALBEDO_TEST_MODULE_LOG, url + "\\n");
  return next(url, context);
}
`;
const RECORD = `import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";
import { pathToFileURL } from "node:url";
register("./hooks.mjs", import.meta.url);
const cache = createRequire(import.meta.url).cache;
process.on("exit", () => appendFileSync(process.env.ALBEDO_TEST_MODULE_LOG, Object.keys(cache).map((path) => pathToFileURL(path).href + "\\n").join("")));
`;

const temps = tempDirs("albedo-startup-");
let preload: string;
let dirs: { workspace: string; home: string; state: string; logs: string };

beforeAll(() => {
  const tools = temps.make();
  writeFileSync(join(tools, "hooks.mjs"), HOOKS);
  preload = join(tools, "record.mjs");
  writeFileSync(preload, RECORD);
  dirs = { workspace: temps.make(), home: temps.make(), state: temps.make(), logs: temps.make() };
  writeSkill(roots.wsAgents(dirs.workspace), "pdf-processing");
});
afterAll(() => temps.cleanup());

/** Runs `albedo ARGS` under the recording preload; its output and every module URL it loaded. */
async function loadedBy(args: readonly string[]): Promise<{ code: number | null; stdout: string; modules: string[] }> {
  const log = join(dirs.logs, `${args.join("-")}.log`);
  writeFileSync(log, "");
  const env = { ...process.env, HOME: dirs.home, ALBEDO_HOME: dirs.state, ALBEDO_TEST_MODULE_LOG: log };
  const run = await runProgram(process.execPath, ["--import", preload, ALBEDO_BIN, ...args], { cwd: dirs.workspace, env });
  return { code: run.code, stdout: run.stdout, modules: readFileSync(log, "utf8").split("\n").filter(Boolean) };
}

/** The heavy packages and domains among `modules`. */
function heavyIn(modules: readonly string[]): string[] {
  const packages = HEAVY_PACKAGES.filter((name) => modules.some((url) => url.includes(`/node_modules/${name}/`)));
  const domains = HEAVY_DOMAINS.filter((name) => modules.some((url) => url.includes(`/dist/src/${name}/`)));
  return [...packages, ...domains.map((name) => `src/${name}`)];
}

describe("X the CLI loads a command's modules only when that command runs", () => {
  it("the recording sees what it must: a command's own modules, the daemon's, and a CommonJS package loaded by a lazy require", async () => {
    // `daemon status` with no daemon running reads the daemon's files (its lock through better-sqlite3) and exits 1.
    const { code, modules } = await loadedBy(["daemon", "status"]);
    expect(code).toBe(1);
    expect(modules.some((url) => url.endsWith("/dist/src/cli/commands/daemonCommands.js"))).toBe(true);
    expect(heavyIn(modules)).toEqual(expect.arrayContaining(["better-sqlite3", "src/daemon"]));
  });

  it("albedo --version loads none of the SDKs, native modules, the daemon, the web console or the MCP server", async () => {
    const { code, stdout, modules } = await loadedBy(["--version"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^albedo \d+\.\d+\.\d+/);
    expect(heavyIn(modules)).toEqual([]);
    // Nor any command's module: the declarations say all --version and --help need.
    expect(modules.filter((url) => /\/dist\/src\/cli\/(skills|exec|serve|chat|console)\.js$/.test(url))).toEqual([]);
  });

  it("albedo --help lists every command from the declarations alone", async () => {
    const { code, stdout, modules } = await loadedBy(["--help"]);
    expect(code).toBe(0);
    expect(stdout).toContain("skills list");
    expect(stdout).toContain("mcp serve");
    expect(heavyIn(modules)).toEqual([]);
  });

  it("albedo skills list loads the catalog and the settings, and none of the rest", async () => {
    const { code, stdout, modules } = await loadedBy(["skills", "list"]);
    expect(code).toBe(0);
    expect(stdout).toContain("pdf-processing");
    expect(heavyIn(modules)).toEqual([]);
  });
});
