/**
 * The import scanner behind test/architecture.test.ts: which module imports which, and the three
 * rules read from that. A domain is a folder directly under src/; its index.ts is the only file
 * another domain may import; domains import each other without cycles; and an index exports only
 * what something outside its domain imports.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

/** One import or re-export of a relative module, as written in `from`. */
export interface ImportEdge {
  /** Repository-relative path of the importing file (`src/cli/main.ts`). */
  readonly from: string;
  /** Repository-relative path of the imported file, `.js` read as `.ts` (`src/kernel/index.ts`). */
  readonly to: string;
  readonly specifier: string;
  /** The names taken (`*` for a namespace import or `export *`). */
  readonly names: readonly string[];
}

/** Every .ts file below `dir` (repository-relative), skipping node_modules and dist. */
export function typeScriptFiles(root: string, dir: string): string[] {
  const walk = (path: string): string[] =>
    readdirSync(path).flatMap((name) => {
      if (name === "node_modules" || name === "dist") return [];
      const full = join(path, name);
      if (statSync(full).isDirectory()) return walk(full);
      return name.endsWith(".ts") ? [relative(root, full).split(sep).join("/")] : [];
    });
  return walk(join(root, dir)).sort();
}

/** The relative imports, re-exports and dynamic imports in one file's text. */
export function importsOf(file: string, text: string): ImportEdge[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const edges: ImportEdge[] = [];
  const add = (specifier: string, names: string[]): void => {
    if (!specifier.startsWith(".")) return;
    const to = join(dirname(file), specifier).split(sep).join("/").replace(/\.js$/, ".ts");
    edges.push({ from: file, to, specifier, names });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, importedNames(node.importClause));
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.exportClause;
      const names = clause && ts.isNamedExports(clause) ? clause.elements.map((element) => (element.propertyName ?? element.name).text) : ["*"];
      add(node.moduleSpecifier.text, names);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteral(argument)) add(argument.text, destructured(node) ?? ["*"]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

/** The names of `const { a, b } = await import(...)`, or undefined when the module is kept whole. */
function destructured(call: ts.CallExpression): string[] | undefined {
  const declaration = ts.isAwaitExpression(call.parent) ? call.parent.parent : undefined;
  if (!declaration || !ts.isVariableDeclaration(declaration) || !ts.isObjectBindingPattern(declaration.name)) return undefined;
  return declaration.name.elements.map((element) => (element.propertyName ?? element.name).getText());
}

function importedNames(clause: ts.ImportClause | undefined): string[] {
  if (!clause) return [];
  const names = clause.name ? ["default"] : [];
  const bindings = clause.namedBindings;
  if (bindings && ts.isNamespaceImport(bindings)) names.push("*");
  if (bindings && ts.isNamedImports(bindings)) names.push(...bindings.elements.map((element) => (element.propertyName ?? element.name).text));
  return names;
}

/** The domain of a file under src/ (`src/kernel/remote/client.ts` → `kernel`), or undefined outside src/. */
export function domainOf(file: string): string | undefined {
  const parts = file.split("/");
  return parts[0] === "src" && parts.length > 2 ? parts[1] : undefined;
}

/** Imports from one domain into another that do not go through that domain's index.ts. */
export function internalImports(edges: readonly ImportEdge[]): string[] {
  return edges
    .filter((edge) => {
      const from = domainOf(edge.from);
      const to = domainOf(edge.to);
      return from !== undefined && to !== undefined && from !== to && edge.to !== `src/${to}/index.ts`;
    })
    .map((edge) => `${edge.from} imports "${edge.specifier}": another domain is imported through src/${domainOf(edge.to)}/index.ts only`);
}

/** The domain graph: for each domain, the domains it imports. */
export function domainGraph(edges: readonly ImportEdge[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const edge of edges) {
    const from = domainOf(edge.from);
    const to = domainOf(edge.to);
    if (from === undefined || to === undefined || from === to) continue;
    if (!graph.has(from)) graph.set(from, new Set());
    graph.get(from)!.add(to);
  }
  return graph;
}

/** One cycle per strongly connected group of domains, written `a → b → a`; empty when the graph has none. */
export function domainCycles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const cycles: string[] = [];
  const done = new Set<string>();
  for (const start of [...graph.keys()].sort()) {
    if (done.has(start)) continue;
    const cycle = cycleThrough(start, graph);
    if (cycle === undefined) continue;
    cycle.forEach((domain) => done.add(domain));
    cycles.push([...cycle, start].join(" → "));
  }
  return cycles;
}

/** The shortest path from `start` back to itself (breadth first), or undefined. */
function cycleThrough(start: string, graph: ReadonlyMap<string, ReadonlySet<string>>): string[] | undefined {
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const at = queue.shift()!;
    for (const next of [...(graph.get(at) ?? [])].sort()) {
      if (next === start) {
        const path = [at];
        while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
        return path;
      }
      if (previous.has(next) || next === start) continue;
      previous.set(next, at);
      queue.push(next);
    }
  }
  return undefined;
}

/** The names each domain's index.ts exports (through `export *` too), read with the compiler. */
export function indexExports(root: string, domains: readonly string[]): Map<string, string[]> {
  const files = domains.map((domain) => resolve(root, "src", domain, "index.ts"));
  const program = ts.createProgram(files, { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, noEmit: true, skipLibCheck: true, types: [] });
  const checker = program.getTypeChecker();
  const exports = new Map<string, string[]>();
  domains.forEach((domain, i) => {
    const source = program.getSourceFile(files[i]!);
    const symbol = source && checker.getSymbolAtLocation(source);
    exports.set(domain, symbol ? checker.getExportsOfModule(symbol).map((entry) => entry.name).sort() : []);
  });
  return exports;
}

/**
 * Names a domain's index.ts exports that no file outside the domain imports from it. A namespace
 * import or `export *` of an index counts as using all of it.
 */
export function unusedExports(exports: ReadonlyMap<string, readonly string[]>, edges: readonly ImportEdge[]): string[] {
  const used = new Map<string, Set<string>>();
  for (const edge of edges) {
    const to = domainOf(edge.to);
    if (to === undefined || edge.to !== `src/${to}/index.ts` || domainOf(edge.from) === to) continue;
    if (!used.has(to)) used.set(to, new Set());
    edge.names.forEach((name) => used.get(to)!.add(name));
  }
  const unused: string[] = [];
  for (const [domain, names] of exports) {
    const taken = used.get(domain) ?? new Set<string>();
    if (taken.has("*")) continue;
    for (const name of names) if (!taken.has(name)) unused.push(`src/${domain}/index.ts exports ${name}, which no other domain, test, bench or script imports`);
  }
  return unused;
}

/**
 * Imports that take another domain's index whole: `import * as x`, `import type * as x`,
 * `export *`, or a dynamic import kept whole. Each would count as using every name the index
 * exports, so the unused-export rule could not see that domain; name what you take instead.
 */
export function wholeIndexImports(edges: readonly ImportEdge[]): string[] {
  return edges
    .filter((edge) => {
      const to = domainOf(edge.to);
      return to !== undefined && edge.to === `src/${to}/index.ts` && domainOf(edge.from) !== to && edge.names.includes("*");
    })
    .map((edge) => `${edge.from} takes "${edge.specifier}" whole: import the names it uses, so the unused-export rule still sees that index`);
}

/** Domains the HTTP contract (src/api/) must not import: the server that answers it and the command line that calls it. */
const ABOVE_THE_CONTRACT = ["daemon", "cli"];

/**
 * Imports that break the HTTP contract's one-way flow: the web page (`web/`) imports nothing of
 * src/, since its contract is the module generated into web/src/generated/; and the api domain
 * imports neither the daemon that binds its routes nor the CLI that calls them.
 */
export function contractImports(edges: readonly ImportEdge[]): string[] {
  const found: string[] = [];
  for (const edge of edges) {
    const to = domainOf(edge.to);
    if (edge.from.startsWith("web/") && edge.to.startsWith("src/")) {
      found.push(`${edge.from} imports "${edge.specifier}": the page takes the contract from web/src/generated/contract.ts (npm run openapi), nothing of src/`);
    } else if (domainOf(edge.from) === "api" && to !== undefined && ABOVE_THE_CONTRACT.includes(to)) {
      found.push(`${edge.from} imports "${edge.specifier}": the contract is below the ${to} domain, which imports it`);
    }
  }
  return found;
}

/** The import edges of every .ts file in `dirs` below `root`. */
export function scanImports(root: string, dirs: readonly string[]): ImportEdge[] {
  return dirs.flatMap((dir) => typeScriptFiles(root, dir)).flatMap((file) => importsOf(file, readFileSync(join(root, file), "utf8")));
}

/** The string literals (and template literals without substitutions) in one file's text. */
export function stringLiteralsOf(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) found.push(node.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * Where a declared RPC method's name is written outside its declaration: each such place, as a
 * sentence. `files` maps repository-relative paths to their text; `home` is the declaring file.
 */
export function methodNamesOutside(methods: readonly string[], home: string, files: ReadonlyMap<string, string>): string[] {
  const names = new Set(methods);
  const found: string[] = [];
  for (const [file, text] of files) {
    if (file === home) continue;
    for (const literal of stringLiteralsOf(file, text)) {
      if (names.has(literal)) found.push(`${file} writes the method name "${literal}": take it from ${home}`);
    }
  }
  return found;
}

/** An `export const NAME` that names a bound or a deadline (MAX_*, *_MS, *_BYTES) outside a limits.ts, as a sentence per place. */
export function boundsOutsideLimits(files: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const [file, text] of files) {
    if (file.endsWith("/limits.ts")) continue;
    for (const match of text.matchAll(/^export const ((?:MAX_[A-Z0-9_]+)|(?:[A-Z0-9_]+_(?:MS|BYTES)))\b/gm)) {
      found.push(`${file} declares the bound ${match[1]}: bounds and deadlines live in the domain's limits.ts`);
    }
  }
  return found;
}
