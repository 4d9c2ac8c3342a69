/**
 * Resource limits of a sandboxed kernel (K-10): address space, process count and open files.
 * They are applied inside bwrap with util-linux `prlimit`, after the user namespace exists, so the
 * process cap counts only the sandbox's own processes (for a non-root user).
 */
import { ownLimit, type ResourceLimit, type ResourceName } from "../platform/index.js";

/** Default address-space cap of the kernel process, in MiB. */
export const DEFAULT_MEMORY_MB = 4096;
/** Default cap on processes (and threads) the kernel's user may run inside its sandbox. */
export const DEFAULT_PROCESSES = 256;
/** Default cap on open file descriptors per process. */
export const DEFAULT_OPEN_FILES = 1024;
/**
 * Default size of the sandbox's shared-memory tmpfs (/dev/shm), in MiB. It is the one writable
 * place in the sandbox backed by RAM (its /tmp and home live on disk in the run dir), so a kernel
 * holds at most memoryMB + shmMB of memory.
 */
export const DEFAULT_SHM_MB = 64;
/** Size of a sandboxed MCP server's /dev/shm, in MiB: as a kernel's. */
export const SERVER_SHM_MB = DEFAULT_SHM_MB;

/** Smallest accepted memory cap, in MiB: below this a Python interpreter cannot start. */
export const MIN_MEMORY_MB = 64;
/** Smallest accepted process cap: the kernel plus a helper thread or two. */
export const MIN_PROCESSES = 8;
/** Smallest accepted open-files cap: ZeroMQ sockets and the interpreter's own files. */
export const MIN_OPEN_FILES = 64;
/** Smallest accepted /dev/shm size, in MiB (multiprocessing's semaphores need a little). */
export const MIN_SHM_MB = 1;
/** Largest accepted value of any limit (keeps byte arithmetic exact in a double). */
export const MAX_LIMIT_VALUE = 2 ** 31;

export interface ResourceLimits {
  /** Address space (RLIMIT_AS), in MiB. */
  readonly memoryMB: number;
  /** RLIMIT_NPROC: processes and threads of the sandbox user. Not enforced for host root. */
  readonly processes: number;
  /** RLIMIT_NOFILE. */
  readonly openFiles: number;
  /** Size of /dev/shm, in MiB: the sandbox's only RAM-backed writable place. */
  readonly shmMB: number;
}

export const DEFAULT_LIMITS: ResourceLimits = {
  memoryMB: DEFAULT_MEMORY_MB,
  processes: DEFAULT_PROCESSES,
  openFiles: DEFAULT_OPEN_FILES,
  shmMB: DEFAULT_SHM_MB,
};

/** The smallest value each limit accepts: below these a Python kernel cannot start. */
export const LIMIT_MINIMUMS: ResourceLimits = { memoryMB: MIN_MEMORY_MB, processes: MIN_PROCESSES, openFiles: MIN_OPEN_FILES, shmMB: MIN_SHM_MB };

/** Fills absent limits with the defaults; throws naming the limit and value when one is not an integer in range. */
export function resolveLimits(given: Partial<ResourceLimits> = {}): ResourceLimits {
  const out = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof ResourceLimits)[]) {
    const value = given[key];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < LIMIT_MINIMUMS[key] || value > MAX_LIMIT_VALUE) {
      throw new Error(`limits.${key} must be an integer from ${LIMIT_MINIMUMS[key]} to ${MAX_LIMIT_VALUE}; got ${String(value)}`);
    }
    out[key] = value;
  }
  return out;
}

const MIB = 1024 * 1024;
/** Each limit's row in this process's own limits, and how many of that row's units make one of ours. */
const OWN_ROWS: Readonly<Record<Exclude<keyof ResourceLimits, "shmMB">, readonly [ResourceName, number]>> = {
  memoryMB: ["addressSpaceBytes", MIB],
  processes: ["processes", 1],
  openFiles: ["openFiles", 1],
};

/**
 * `limits` lowered to this process's own hard limits where they are above them, with a warning for
 * each: the kernel inherits those, and prlimit inside the sandbox (no capabilities) cannot raise a
 * hard limit, so asking for more would fail the kernel's start.
 */
export function withinOwnLimits(limits: ResourceLimits, own: (name: ResourceName) => ResourceLimit | undefined = ownLimit): { limits: ResourceLimits; warnings: string[] } {
  const out = { ...limits };
  const warnings: string[] = [];
  for (const [key, [row, unit]] of Object.entries(OWN_ROWS) as [keyof typeof OWN_ROWS, readonly [ResourceName, number]][]) {
    const hard = own(row)?.hard ?? Infinity;
    const most = Math.floor(hard / unit);
    if (out[key] <= most) continue;
    warnings.push(`sandbox: limits.${key} ${out[key]} is above this process's own hard limit (${most}); the kernel gets ${most}. Raise the limit the daemon starts with to give kernels more.`);
    out[key] = most;
  }
  return { limits: out, warnings };
}

/** The `prlimit` prefix that sets each limit (soft and hard, so the kernel cannot raise it back). */
export function prlimitArgv(prlimit: string, limits: ResourceLimits): string[] {
  const bytes = limits.memoryMB * 1024 * 1024;
  return [prlimit, `--as=${bytes}`, `--nproc=${limits.processes}`, `--nofile=${limits.openFiles}`, "--"];
}

/**
 * Default quota of a workspace's package layer (N-5), in MiB: what `%pip install` in its sandboxed
 * kernels may put there in all. `limits.packagesMB` in the global settings sets another.
 */
export const DEFAULT_PACKAGES_MB = 2048;
/** Smallest accepted package-layer quota, in MiB. */
export const MIN_PACKAGES_MB = 1;
/** Entries a measure of a package layer walks; a layer with more counts as over its quota. */
export const MAX_PACKAGE_LAYER_ENTRIES = 200_000;
