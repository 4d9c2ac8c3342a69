/**
 * How a server from the global settings starts on the host without running anything a session's
 * kernel can write (M-1, M-2). It starts in a neutral working directory (never the workspace, whose
 * modules `python -m` and whose `node_modules` `npx` would load first); its command is found on a
 * PATH without the kernel's places and handed over as an absolute path; an argument that names a
 * file the kernel can write, a working directory or a search path there, refuses the start. A
 * server that wants the workspace as data gets it as `${workspace}` in its arguments or as
 * ALBEDO_WORKSPACE in its environment.
 */
import { statSync } from "node:fs";
import { delimiter, isAbsolute, resolve } from "node:path";
import { findExecutable } from "../platform/index.js";
import type { KernelWrites, ServerProcess } from "../sandbox/index.js";

/** The variable a server finds its session's workspace in. */
export const MCP_WORKSPACE_ENV = "ALBEDO_WORKSPACE";
/** What `${workspace}` in an entry's arguments becomes: the session's workspace. */
export const MCP_WORKSPACE_ARG = "${workspace}";
/** Variables that tell a program where to load code from: none may point where the kernel writes. */
export const CODE_PATH_VARIABLES: readonly string[] = [
  "PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "NODE_PATH", "NODE_OPTIONS",
  "LD_PRELOAD", "LD_LIBRARY_PATH", "PERL5LIB", "RUBYLIB", "GEM_PATH", "GEM_HOME", "CLASSPATH",
];

export interface HostLaunchInput {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** The entry's own `cwd`, if any. */
  readonly cwd: string | undefined;
  readonly workspace: string;
  /** An empty directory the kernel cannot write: the working directory of a server without a cwd. */
  readonly neutralDir: string;
  readonly writes: KernelWrites;
  /** A shared server serves sessions of several workspaces: it gets no ALBEDO_WORKSPACE. */
  readonly shared: boolean;
}

/** The launch of a global entry (its command absolute), or why it may not start (one sentence naming the path). */
export function hostLaunch(input: HostLaunchInput): ServerProcess | string {
  const { writes } = input;
  if (input.cwd !== undefined && !isAbsolute(input.cwd)) return `its cwd ${input.cwd} must be an absolute path in the global settings (a relative one would depend on where the session runs)`;
  const cwd = input.cwd ?? input.neutralDir;
  const refusedCwd = writes.refusal(cwd, "cwd");
  if (refusedCwd !== undefined) return `${refusedCwd}; give the server the workspace as ${MCP_WORKSPACE_ARG} in its args, or read ${MCP_WORKSPACE_ENV}`;
  const env: Record<string, string> = { ...input.env, PATH: safeSearchPath(input.env.PATH ?? "", writes), ...(input.shared ? {} : { [MCP_WORKSPACE_ENV]: input.workspace }) };
  if (env.HOME !== undefined && writes.writes(env.HOME)) env.HOME = input.neutralDir;
  for (const name of CODE_PATH_VARIABLES.filter((key) => key !== "PATH" && env[key] !== undefined)) {
    const inside = pathsIn(env[name]!).find((path) => writes.writes(path));
    if (inside !== undefined) return `its env ${name} names ${inside}, where the session's kernel can write, so the kernel could choose the code it loads`;
  }
  const command = input.command.includes("/") ? resolve(cwd, input.command) : findExecutable(input.command, env.PATH);
  if (command === undefined) return `its command ${input.command} is not found on PATH (without the places the session's kernel can write)`;
  const refusedCommand = writes.refusal(command, "command");
  if (refusedCommand !== undefined) return refusedCommand;
  const args = input.args.map((arg) => arg.split(MCP_WORKSPACE_ARG).join(input.workspace));
  for (const arg of args) {
    const path = resolve(cwd, arg);
    if (isRegularFile(path) && writes.writes(path)) return `its argument ${arg} is a file where the session's kernel can write, so the kernel could choose what runs on the host`;
  }
  return { command, args, env, cwd };
}

/** `path` without its relative entries and those the kernel can write. */
function safeSearchPath(path: string, writes: KernelWrites): string {
  return path.split(delimiter).filter((dir) => isAbsolute(dir) && !writes.writes(dir)).join(delimiter);
}

/** Every absolute path in a variable's value: its `:`-separated entries and the words of an option string. */
function pathsIn(value: string): string[] {
  return value.split(/[\s:=]+/).filter((part) => isAbsolute(part));
}

function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
