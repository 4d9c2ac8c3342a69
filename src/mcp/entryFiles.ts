/**
 * The workspace files a project server's entry names, and one digest of their content. An approval
 * binds that digest beside the entry's own hash, so rewriting the script an approved entry runs
 * (which the kernel can do: the workspace is its) asks for approval again instead of running the
 * kernel's code with the entry's secrets. What the named files import in turn is not bound: the
 * server's own sandbox is what holds there.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { closeQuietly, openRegularFile, within } from "../platform/index.js";
import { MAX_MCP_BOUND_BYTES, MAX_MCP_BOUND_FILES } from "./limits.js";
import type { McpStdioEntry } from "./section.js";

/** The digest of the files an entry names, or why they cannot be bound (too many, too large). */
export type EntryFiles = { readonly digest: string; readonly files: readonly string[] } | { readonly problem: string };

/** The directory a project entry starts in: its `cwd` against the workspace, else the workspace. */
export function projectCwd(entry: McpStdioEntry, workspace: string): string {
  return entry.cwd === undefined ? workspace : isAbsolute(entry.cwd) ? entry.cwd : resolve(workspace, entry.cwd);
}

/**
 * The regular files inside `workspace` that `entry` names: its command and each argument that is
 * a path to one (against the entry's cwd), and for `-m MODULE` the module's file or package. The
 * digest covers each file's path (relative to the workspace) and content, so it changes with either.
 */
export function entryFiles(entry: McpStdioEntry, workspace: string): EntryFiles {
  const cwd = projectCwd(entry, workspace);
  const named = new Set<string>();
  const words = [entry.command, ...(entry.args ?? [])];
  for (let i = 0; i < words.length; i += 1) {
    const word = words[i]!;
    if (word === "-m" && i + 1 < words.length) {
      for (const file of moduleFiles(words[i + 1]!, cwd)) named.add(file);
      i += 1;
      continue;
    }
    const path = resolve(cwd, word);
    if (within(path, workspace) && kindOf(path) === "file") named.add(path);
  }
  const files = [...named].filter((file) => within(file, workspace)).sort();
  if (files.length > MAX_MCP_BOUND_FILES) return { problem: `it runs ${files.length} files from the workspace; an approval binds at most ${MAX_MCP_BOUND_FILES} (MAX_MCP_BOUND_FILES)` };
  const hash = createHash("sha256");
  let bytes = 0;
  for (const file of files) {
    const content = readRegular(file);
    if (typeof content === "string") return { problem: `${file} ${content}` };
    bytes += content.length;
    if (bytes > MAX_MCP_BOUND_BYTES) return { problem: `the files it runs from the workspace hold over ${MAX_MCP_BOUND_BYTES} bytes; an approval binds at most that (MAX_MCP_BOUND_BYTES)` };
    hash.update(`${relative(workspace, file)}\0${createHash("sha256").update(content).digest("hex")}\n`);
  }
  return { digest: hash.digest("hex"), files: files.map((file) => relative(workspace, file)) };
}

/** The file of `module` under `cwd` (`pkg/mod.py`), or every file of its package directory, bounded. */
function moduleFiles(module: string, cwd: string): string[] {
  const base = join(cwd, ...module.split("."));
  if (kindOf(`${base}.py`) === "file") return [`${base}.py`];
  const files: string[] = [];
  const walk = (dir: string): void => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const item of entries) {
      if (files.length > MAX_MCP_BOUND_FILES) return;
      const path = `${dir}${sep}${item.name}`;
      if (item.isDirectory() && item.name !== "__pycache__") walk(path);
      else if (item.isFile()) files.push(path);
    }
  };
  walk(base);
  return files;
}

/** "file" for a regular file (links followed), "other" for anything else there, undefined for nothing. */
function kindOf(path: string): "file" | "other" | undefined {
  try {
    const opened = openRegularFile(path);
    if (opened.kind !== "file") return "other";
    closeQuietly(opened.fd);
    return "file";
  } catch {
    return undefined;
  }
}

/** The content of the regular file at `path`, read without blocking on whatever the kernel may have swapped in; a reason when it cannot be read. */
function readRegular(path: string): Buffer | string {
  try {
    const opened = openRegularFile(path);
    if (opened.kind !== "file") return `is ${opened.what}`;
    try {
      return readFileSync(opened.fd);
    } finally {
      closeQuietly(opened.fd);
    }
  } catch (error) {
    return `cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})`;
  }
}
