/**
 * Finding the sandbox tools on this machine: `bwrap` (required for a sandbox) and `prlimit`
 * (for resource limits). The bwrap probe starts one real sandbox and is cached per binary path.
 */
import { execFile, spawnSync, type SpawnSyncReturns } from "node:child_process";
import { findExecutable } from "../platform/index.js";

/** How long the one-time bwrap probe may take before bwrap counts as unusable. */
export const PROBE_TIMEOUT_MS = 10_000;
/** Bytes of the probe's stderr kept in the reason text. */
export const MAX_PROBE_ERROR_CHARS = 400;

/** The arguments of the probe: the same namespaces and capability drop a kernel sandbox uses. */
export const PROBE_ARGS: readonly string[] = [
  "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
  "--unshare-all", "--unshare-user", "--cap-drop", "ALL", "--die-with-parent", "--", "true",
];

export type Detection =
  | { readonly usable: true; readonly bwrap: string; readonly prlimit?: string }
  | { readonly usable: false; readonly reason: string; readonly missing: boolean };

const probeCache = new Map<string, string | null>();

/** Runs the probe sandbox once per bwrap path; returns null when it works, else why it does not. */
export function probeBwrap(bwrap: string): string | null {
  const cached = probeCache.get(bwrap);
  if (cached !== undefined) return cached;
  const result = spawnSync(bwrap, PROBE_ARGS, { timeout: PROBE_TIMEOUT_MS, encoding: "utf8", stdio: ["ignore", "ignore", "pipe"] });
  return remember(bwrap, result);
}

/**
 * Runs the same probe without blocking the event loop, so that a daemon's first session open
 * does not stall its other sessions; detectSandbox then finds the answer cached. Never throws.
 */
export async function warmSandboxProbe(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const bwrap = process.platform === "linux" ? findExecutable("bwrap", env.PATH) : undefined;
  if (bwrap === undefined || probeCache.has(bwrap)) return;
  // Sessions opening together share the one probe instead of each starting a sandbox of its own.
  let probing = probesUnderWay.get(bwrap);
  if (probing === undefined) {
    probing = new Promise<Pick<SpawnSyncReturns<string>, "error" | "status" | "signal" | "stderr">>((resolve) => {
      const child = execFile(bwrap, PROBE_ARGS, { timeout: PROBE_TIMEOUT_MS, encoding: "utf8" }, (error, _stdout, stderr) => {
        const failed = error as (NodeJS.ErrnoException & { code?: unknown }) | null;
        const spawnError = failed && typeof failed.code === "string" ? failed : undefined;
        resolve({ status: child.exitCode, signal: child.signalCode, stderr, ...(spawnError ? { error: spawnError } : {}) });
      });
    }).then((result) => void remember(bwrap, result)).finally(() => probesUnderWay.delete(bwrap));
    probesUnderWay.set(bwrap, probing);
  }
  await probing;
}

/** Probes started by warmSandboxProbe and not yet answered, by bwrap path. */
const probesUnderWay = new Map<string, Promise<void>>();

function remember(bwrap: string, result: Pick<SpawnSyncReturns<string>, "error" | "status" | "signal" | "stderr">): string | null {
  let problem: string | null = null;
  if (result.error) problem = result.error.message;
  else if (result.status !== 0) {
    const detail = (result.stderr ?? "").trim().slice(0, MAX_PROBE_ERROR_CHARS);
    problem = `exit ${String(result.status ?? result.signal)}${detail ? `: ${detail}` : ""}`;
  }
  probeCache.set(bwrap, problem);
  return problem;
}

/** Looks up bwrap and prlimit on the PATH of `env` and probes bwrap; never throws. */
export function detectSandbox(env: NodeJS.ProcessEnv = process.env): Detection {
  if (process.platform !== "linux") return { usable: false, missing: true, reason: `bubblewrap needs Linux; this is ${process.platform}` };
  const bwrap = findExecutable("bwrap", env.PATH);
  if (bwrap === undefined) return { usable: false, missing: true, reason: "bubblewrap (bwrap) not found on PATH" };
  const problem = probeBwrap(bwrap);
  if (problem !== null) return { usable: false, missing: false, reason: `bubblewrap at ${bwrap} cannot start a sandbox (${problem})` };
  const prlimit = findExecutable("prlimit", env.PATH);
  return prlimit === undefined ? { usable: true, bwrap } : { usable: true, bwrap, prlimit };
}
