/**
 * The sandbox of an MCP server that a project's settings name. A project's server runs what lies in
 * its workspace, and the session's kernel can rewrite any of it (the script, the modules beside it,
 * a package in `node_modules`), so such a server runs in bubblewrap of its own: the system
 * read-only, the workspace read-only, its own /tmp and home in a scratch dir of the state dir that
 * no kernel sees, the host's network (servers call APIs), and nothing of the user's home, the state
 * dir or other sessions. Whatever the kernel planted can reach no more than that.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { findExecutable, within } from "../platform/index.js";
import { detectSandbox } from "./detect.js";
import { SERVER_SHM_MB } from "./limits.js";
import { traceRealPath } from "./paths.js";
import { REPLACED_SYSTEM_PATHS, SandboxPlan, type ExposureRequest } from "./plan.js";
import { bwrapLaunch, type SandboxProfile } from "./profile.js";

/** Under the state dir: one scratch dir per running server, removed when it stops. */
export const SERVER_SCRATCH_DIR = "mcp-run";

export interface ServerSandboxPlaces {
  readonly workspace: string;
  readonly stateDir: string;
  readonly home: string;
}

export interface ServerProcess {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
}

/** A server's launch inside bubblewrap: spawn `command args` with `env`, passing `fds` from descriptor 3 on; dispose() when the process is gone. */
export interface SandboxedProcess {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly fds: readonly number[];
  dispose(): void;
}

/** Thrown when a project server must be sandboxed and this machine has no working bubblewrap. */
export class ServerSandboxError extends Error {
  override readonly name = "ServerSandboxError";
}

/**
 * Wraps `server` in its sandbox. Nothing of the server is run on the host to decide this (a
 * project's command may be the kernel's): its install is found from its path alone. Throws
 * ServerSandboxError without a usable bubblewrap, or what pinning the workspace throws.
 */
export function sandboxServer(places: ServerSandboxPlaces, server: ServerProcess, env: NodeJS.ProcessEnv = process.env): SandboxedProcess {
  const found = detectSandbox(env);
  if (!found.usable) throw new ServerSandboxError(`a project's MCP server runs only in a sandbox, and bubblewrap is not usable here: ${found.reason}`);
  mkdirSync(join(places.stateDir, SERVER_SCRATCH_DIR), { recursive: true, mode: 0o700 });
  const scratch = mkdtempSync(join(places.stateDir, SERVER_SCRATCH_DIR, "server-"));
  const readOnly = installOf(server, places.home);
  let plan: SandboxPlan;
  try {
    plan = SandboxPlan.make({ ...places, runDir: scratch }, readOnly, "ro");
  } catch (error) {
    rmSync(scratch, { recursive: true, force: true });
    throw error;
  }
  const profile: SandboxProfile = { ...places, runDir: scratch, readOnly, network: true };
  const launch = bwrapLaunch(profile, plan, { shmMB: SERVER_SHM_MB, connection: false, chdir: server.cwd });
  return {
    command: found.bwrap,
    args: [...launch.args, "--", server.command, ...server.args],
    env: server.env,
    fds: launch.fds,
    dispose: () => {
      plan.close();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

/**
 * Where the server's command is installed, when a place the sandbox hides or replaces (the home,
 * the host's /tmp and /run) holds it: the prefix of the command as found on PATH and of its real
 * file (`~/.pyenv/versions/3.11.7` for `~/.pyenv/versions/3.11.7/bin/python3.11`, a checkout's
 * `.venv` under /tmp), shown read-only. Never one of those places whole; the plan still refuses
 * what the state dir or a kernel-writable place holds.
 */
function installOf(server: ServerProcess, home: string): ExposureRequest[] {
  const found = server.command.includes("/") ? resolve(server.cwd, server.command) : findExecutable(server.command, server.env.PATH);
  if (found === undefined) return [];
  const real = traceRealPath(found)?.real ?? found;
  const hidden = [home, ...REPLACED_SYSTEM_PATHS];
  const prefixes = [found, real].filter((path) => hidden.some((place) => within(path, place))).map((path) => dirname(dirname(path)));
  return [...new Set(prefixes)]
    .filter((prefix) => !hidden.some((place) => within(place, prefix)))
    .map((path) => ({ path, kind: "ro" as const, what: `the install of ${basename(server.command)}` }));
}
