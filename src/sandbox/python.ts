/** The directories an interpreter needs to run, so a sandbox can expose them read-only. */
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
  "print(json.dumps(paths))",
].join("\n");

/** Prefixes, install dir and user site of `python` (deduplicated); rejects when the interpreter cannot be run. */
export async function pythonReadPaths(python: string): Promise<string[]> {
  let stdout: string;
  try {
    ({ stdout } = await promisify(execFile)(python, ["-c", QUERY], { encoding: "utf8", timeout: PYTHON_QUERY_TIMEOUT_MS }));
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr?.trim() || (error as Error).message;
    throw new Error(`cannot ask ${python} for its install paths: ${detail}`);
  }
  const paths = JSON.parse(stdout) as unknown;
  if (!Array.isArray(paths) || !paths.every((p) => typeof p === "string")) throw new Error(`unexpected answer from ${python}`);
  return [...new Set(paths as string[])];
}
