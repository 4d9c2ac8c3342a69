/** What the host learns from an interpreter, by running it once: the directories a sandbox exposes read-only, and what a package layer over it is built from. */
import { execFile } from "node:child_process";
import { promisify } from "node:util";

/** How long asking the interpreter for its prefixes may take. */
export const PYTHON_QUERY_TIMEOUT_MS = 15_000;

const QUERY = [
  "import json, os, site, sys",
  "paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,",
  "         os.path.dirname(os.path.realpath(sys.executable))]",
  "user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None",
  "if user_site and os.path.isdir(user_site): paths.append(user_site)",
  "base = getattr(sys, '_base_executable', None) or sys.executable",
  "sites = [p for p in site.getsitepackages() if os.path.isdir(p)]",
  "print(json.dumps({'paths': paths, 'base': base, 'version': '%d.%d' % sys.version_info[:2], 'sites': sites}))",
].join("\n");

/** What a package layer over an interpreter needs (see packageLayer.ts). */
export interface InterpreterFacts {
  /** The interpreter a venv made from this one would run (a venv's base interpreter, or itself). */
  readonly base: string;
  /** "3.11". */
  readonly version: string;
  /** Its site-packages directories, which a layer over it adds after its own. */
  readonly sites: readonly string[];
}

export interface InterpreterPaths {
  /** Prefixes, install dir and user site (deduplicated): what a sandbox shows read-only. */
  readonly readPaths: string[];
  readonly facts: InterpreterFacts;
}

/** Asks `python` (run on the host: it must be an interpreter the user chose, never one a kernel can write) for its paths; rejects when it cannot be run. */
export async function pythonPaths(python: string): Promise<InterpreterPaths> {
  let stdout: string;
  try {
    ({ stdout } = await promisify(execFile)(python, ["-c", QUERY], { encoding: "utf8", timeout: PYTHON_QUERY_TIMEOUT_MS }));
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr?.trim() || (error as Error).message;
    throw new Error(`cannot ask ${python} for its install paths: ${detail}`);
  }
  const answer = JSON.parse(stdout) as { paths?: unknown; base?: unknown; version?: unknown; sites?: unknown };
  const strings = (value: unknown): value is string[] => Array.isArray(value) && value.every((p) => typeof p === "string");
  if (!strings(answer.paths) || !strings(answer.sites) || typeof answer.base !== "string" || typeof answer.version !== "string") {
    throw new Error(`unexpected answer from ${python}`);
  }
  return { readPaths: [...new Set(answer.paths)], facts: { base: answer.base, version: answer.version, sites: answer.sites } };
}

/** Prefixes, install dir and user site of `python` (deduplicated); rejects when the interpreter cannot be run. */
export async function pythonReadPaths(python: string): Promise<string[]> {
  return (await pythonPaths(python)).readPaths;
}
