/**
 * The layout rules of docs/architecture.md, read from the imports themselves: another domain is
 * imported through its index.ts only, domains import each other without a cycle, and an index
 * exports only what something outside its domain (another domain, a test, bench/) imports.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SESSION_METHODS } from "../src/session/rpcApi.js";
import {
  boundsOutsideLimits, contractImports, domainCycles, domainGraph, importsOf, indexExports, internalImports, methodNamesOutside, scanImports,
  stringLiteralsOf, typeScriptFiles, unusedExports, wholeIndexImports, type ImportEdge,
} from "./support/architecture.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const edges = scanImports(ROOT, ["src", "test", "bench"]);
const srcEdges = edges.filter((edge) => edge.from.startsWith("src/"));

describe("X architecture: domains", () => {
  it("imports another domain through its index.ts only", () => {
    expect(internalImports(srcEdges)).toEqual([]);
  });

  it("has no cycle between domains", () => {
    expect(domainCycles(domainGraph(srcEdges))).toEqual([]);
  });

  it("exports from each index.ts only what another domain, a test or bench/ imports", () => {
    const domains = readdirSync(new URL("../src/", import.meta.url), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && readdirSync(new URL(`../src/${entry.name}/`, import.meta.url)).includes("index.ts"))
      .map((entry) => entry.name);
    expect(unusedExports(indexExports(ROOT, domains), edges)).toEqual([]);
  });

  it("takes another domain's index by name, never whole, so the unused-export rule sees every index", () => {
    expect(wholeIndexImports(edges)).toEqual([]);
  });

  it("keeps the HTTP contract in src/api/: the page takes its generated copy, the CLI takes it from api, never from the daemon", () => {
    expect(contractImports([...edges, ...scanImports(ROOT, ["web/src"])])).toEqual([]);
    const exports = indexExports(ROOT, ["api", "daemon"]);
    expect(exports.get("daemon")!.filter((name) => exports.get("api")!.includes(name))).toEqual([]);
  });

  it("keeps the bounds and deadlines of the kernel, rpc and skills domains in their limits.ts", () => {
    const files = new Map(["kernel", "rpc", "skills"].flatMap((domain) => typeScriptFiles(ROOT, `src/${domain}`)).map((file) => [file, readFileSync(join(ROOT, file), "utf8")] as const));
    expect(boundsOutsideLimits(files)).toEqual([]);
  });

  it("writes the name of albedo's directory once (platform/paths.ts), and the launcher takes its facts from the generated contract", () => {
    const literal = typeScriptFiles(ROOT, "src").filter((file) => file !== "src/platform/paths.ts" && stringLiteralsOf(file, readFileSync(join(ROOT, file), "utf8")).includes(".albedo"));
    expect(literal).toEqual([]);
    const launcher = readFileSync(join(ROOT, "kernel", "albedo", "launch.py"), "utf8");
    for (const fact of ['".albedo"', '"ALBEDO_HOME"', '"daemon.json"', '"daemon.token"', '"daemon.log"', '"/health"', '"/sessions"', '"ALBEDO_INSTALL"', '"ALBEDO_NODE"']) {
      expect(launcher, fact).not.toContain(fact);
    }
  });

  it("writes each kernel-facing RPC method's name once, in its declaration table", () => {
    const files = new Map(typeScriptFiles(ROOT, "src").map((file) => [file, readFileSync(join(ROOT, file), "utf8")] as const));
    expect(methodNamesOutside(SESSION_METHODS.map((method) => method.name), "src/session/rpcApi.ts", files)).toEqual([]);
  });
});

// The rules above pass on today's tree; these show each one catches what it is there to catch.
describe("X architecture: the checks catch violations", () => {
  const edge = (from: string, to: string, names: string[] = ["x"]): ImportEdge => ({ from, to, specifier: to, names });

  it("reads imports, re-exports, type imports and dynamic imports", () => {
    const text = [
      'import { a, b as c } from "../kernel/index.js";',
      'import type { T } from "./local.js";',
      'export * from "./remote/index.js";',
      'export { d } from "../platform/index.js";',
      'import fs from "node:fs";',
      'const m = await import("../daemon/server.js");',
      'const { startDaemon } = await import("../daemon/index.js");',
    ].join("\n");
    expect(importsOf("src/cli/main.ts", text).map(({ to, names }) => [to, names])).toEqual([
      ["src/kernel/index.ts", ["a", "b"]],
      ["src/cli/local.ts", ["T"]],
      ["src/cli/remote/index.ts", ["*"]],
      ["src/platform/index.ts", ["d"]],
      ["src/daemon/server.ts", ["*"]],
      ["src/daemon/index.ts", ["startDaemon"]],
    ]);
  });

  it("names an import of another domain's internals, and allows one inside a domain", () => {
    expect(internalImports([edge("src/cli/doctor.ts", "src/kernel/kernelspecs.ts"), edge("src/kernel/client.ts", "src/kernel/remote/client.ts")])).toEqual([
      'src/cli/doctor.ts imports "src/kernel/kernelspecs.ts": another domain is imported through src/kernel/index.ts only',
    ]);
  });

  it("names a cycle of three domains", () => {
    const graph = domainGraph([
      edge("src/kernel/a.ts", "src/python/index.ts"),
      edge("src/python/b.ts", "src/sandbox/index.ts"),
      edge("src/sandbox/c.ts", "src/kernel/index.ts"),
      edge("src/cli/d.ts", "src/kernel/index.ts"),
    ]);
    expect(domainCycles(graph)).toEqual(["kernel → python → sandbox → kernel"]);
  });

  it("names an export nobody outside its domain takes, and counts a namespace import as taking all", () => {
    const exports = new Map([
      ["kernel", ["startKernel", "unused"]],
      ["json", ["a", "b"]],
    ]);
    const used = [edge("src/cli/a.ts", "src/kernel/index.ts", ["startKernel"]), edge("src/kernel/remote/b.ts", "src/kernel/index.ts", ["unused"]), edge("test/json/x.test.ts", "src/json/index.ts", ["*"])];
    expect(unusedExports(exports, used)).toEqual(["src/kernel/index.ts exports unused, which no other domain, test, bench or script imports"]);
  });

  it("names an import that takes another domain's index whole, and allows one inside the domain or by name", () => {
    const text = ['import type * as skills from "../../src/skills/index.js";', 'import { readSettings } from "../../src/settings/index.js";'].join("\n");
    const found = [...importsOf("test/support/x.ts", text), edge("src/kernel/remote/index.ts", "src/kernel/index.ts", ["*"]), edge("src/cli/a.ts", "src/kernel/index.ts", ["*"])];
    expect(wholeIndexImports(found)).toEqual([
      'test/support/x.ts takes "../../src/skills/index.js" whole: import the names it uses, so the unused-export rule still sees that index',
      'src/cli/a.ts takes "src/kernel/index.ts" whole: import the names it uses, so the unused-export rule still sees that index',
    ]);
  });

  it("names a page import of src/ and a contract import of the daemon or the CLI, and allows the rest", () => {
    const page = importsOf("web/src/login.ts", ['import { A } from "./generated/contract.js";', 'import { B } from "../../src/api/webProtocol.js";'].join("\n"));
    const found = [...page, edge("src/api/client.ts", "src/daemon/state.ts"), edge("src/api/a.ts", "src/platform/index.ts"), edge("src/cli/a.ts", "src/api/index.ts"), edge("src/daemon/a.ts", "src/api/index.ts")];
    expect(contractImports(found)).toEqual([
      'web/src/login.ts imports "../../src/api/webProtocol.js": the page takes the contract from web/src/generated/contract.ts (npm run openapi), nothing of src/',
      'src/api/client.ts imports "src/daemon/state.ts": the contract is below the daemon domain, which imports it',
    ]);
  });

  it("names a bound declared outside a limits.ts, and leaves other constants alone", () => {
    const files = new Map([
      ["src/kernel/limits.ts", "export const MAX_A = 1;"],
      ["src/kernel/a.ts", "export const MAX_B = 1;\nexport const WAIT_MS = 2;\nexport const SIZE_BYTES = 3;\nexport const NAME = \"x\";"],
    ]);
    expect(boundsOutsideLimits(files).map((line) => /the bound (\w+)/.exec(line)![1])).toEqual(["MAX_B", "WAIT_MS", "SIZE_BYTES"]);
  });

  it("names a method name written outside the declaration table, and ignores one inside it or in a longer text", () => {
    const files = new Map([
      ["src/session/rpcApi.ts", 'const m = { name: "skills.read" };'],
      ["src/session/other.ts", 'call("skills.read"); const t = `skills.read`; const s = "skills.read takes a name";'],
    ]);
    expect(methodNamesOutside(["skills.read"], "src/session/rpcApi.ts", files)).toEqual([
      'src/session/other.ts writes the method name "skills.read": take it from src/session/rpcApi.ts',
      'src/session/other.ts writes the method name "skills.read": take it from src/session/rpcApi.ts',
    ]);
  });
});
