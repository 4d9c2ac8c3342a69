/**
 * The bwrap profile of one kernel (K-10): which paths it sees and how, its namespaces, and its
 * environment. Pure argument building over a pinned plan; nothing here starts a process.
 */
import { isAbsolute, join } from "node:path";
import { BRIDGE_ENV_NAMES, CHECKPOINT_DIR_ENV, CHECKPOINT_RESTORE_ENV } from "../bridge/index.js";
import { CONNECTION_FILE_PLACEHOLDER, substituteConnectionFile } from "../kernel/index.js";
import { mountArgs, viewMounts } from "./mounts.js";
import type { ExposureRequest, SandboxPlan } from "./plan.js";

/** PATH inside the sandbox when the spawn environment gives none. */
export const DEFAULT_SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin";
/** Locale inside the sandbox when the spawn environment gives none. */
export const DEFAULT_SANDBOX_LANG = "C.UTF-8";
/**
 * Variables copied from the spawn environment into the sandbox: a few system and Python ones and
 * the kernel bridge's (its RPC endpoint, token, bounds and extensions, and no other ALBEDO_* one);
 * everything else (API keys, the runtime's own settings) is dropped. JPY_PARENT_PID is left out on
 * purpose: inside the pid namespace the kernel's parent is pid 1, which ipykernel's parent poller
 * reads as "the runtime died" and exits; --die-with-parent does that job instead.
 */
export const PASS_ENV_NAMES: readonly string[] = [
  "PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "TZ",
  "PYTHONPATH", "PYTHONUNBUFFERED", "PYTHONIOENCODING", "PYTHONDONTWRITEBYTECODE",
  "JPY_SESSION_NAME", ...BRIDGE_ENV_NAMES, CHECKPOINT_DIR_ENV, CHECKPOINT_RESTORE_ENV,
];
/**
 * Set for every sandboxed kernel, whatever the host says: matplotlib draws with ipykernel's inline
 * backend (there is no display, and a host's MPLBACKEND or DISPLAY is not passed in), and keeps its
 * config and font cache in the session's scratch /tmp. The home is scratch too, except when the
 * workspace is the home: then ~/.config and ~/.cache are the user's real ones, which a kernel's
 * font cache has no business writing, and a per-session place costs only the cache's rebuild.
 */
export const SANDBOX_PLOT_ENV: Readonly<Record<string, string>> = {
  MPLBACKEND: "module://matplotlib_inline.backend_inline",
  MPLCONFIGDIR: "/tmp/matplotlib",
};
/** Kept visible under the hidden /run when network is allowed, so DNS through systemd-resolved works. */
export const RESOLVER_RUN_DIR = "/run/systemd/resolve";
/** Where the kernel reads its connection file: a 0600 file in the sandbox's private /run, never on the host's disk. */
export const SANDBOX_CONNECTION_FILE = "/run/albedo/connection.json";
const MIB = 1024 * 1024;
/** Where the kernel's package layer is, its quota in bytes, and "0" when it is mounted read-only (over its quota). */
export const PACKAGES_DIR_ENV = "ALBEDO_PACKAGES_DIR";
export const PACKAGES_QUOTA_ENV = "ALBEDO_PACKAGES_QUOTA";
export const PACKAGES_WRITABLE_ENV = "ALBEDO_PACKAGES_WRITABLE";
/** Host places hidden behind a small empty tmpfs. */
const TMPFS_HIDDEN_PATHS: readonly string[] = ["/run"];

export interface SandboxProfile {
  /** Read-write; the kernel's working directory. Must exist. */
  readonly workspace: string;
  /** The session's own 0700 run dir (IPC sockets, scratch dirs); read-write. Must exist. Its parent holds every session's run dir: never exposed. */
  readonly runDir: string;
  /** $ALBEDO_HOME: hidden entirely except `runDir`, `checkpointDir` (and user skill roots inside it). */
  readonly stateDir: string;
  /** The session's own checkpoint directory (K-15), read-write; absent when checkpoints are off. */
  readonly checkpointDir?: string;
  /**
   * The workspace's package layer (N-5): bound at its real path, read-write unless it is over its
   * quota; its `bin` leads PATH, and the kernel learns where it is and its quota.
   */
  readonly packageLayer?: { readonly dir: string; readonly kind: "ro" | "rw"; readonly quotaBytes: number };
  /** The user's home: replaced by a private scratch dir, except what is exposed below. */
  readonly home: string;
  /** Directories to show read-only (skill roots, linked skills, the Python install): judged and pinned once. */
  readonly readOnly: readonly ExposureRequest[];
  /** Share the host network; default false (a private network namespace with only loopback). */
  readonly network?: boolean;
  /** Set inside the sandbox last, over everything (e.g. the RPC address and token). */
  readonly env?: Readonly<Record<string, string>>;
}

/** Throws when a profile path is not absolute; existence is the plan's to check. */
export function checkProfile(profile: SandboxProfile): void {
  for (const [what, path] of [["workspace", profile.workspace], ["run dir", profile.runDir], ["state dir", profile.stateDir], ["home", profile.home]] as const) {
    if (!isAbsolute(path)) throw new Error(`sandbox ${what} must be an absolute path: ${path}`);
  }
}

/** The environment bwrap and the kernel start with: defaults, then allow-listed spawn variables, SANDBOX_PLOT_ENV, then `profile.env`; nothing else. */
export function sandboxEnv(profile: SandboxProfile, spawnEnv: Readonly<Record<string, string | undefined>> = {}): Record<string, string> {
  const env: Record<string, string> = { PATH: DEFAULT_SANDBOX_PATH, LANG: DEFAULT_SANDBOX_LANG };
  for (const [name, value] of Object.entries(spawnEnv)) {
    if (value === undefined) continue;
    if (PASS_ENV_NAMES.includes(name)) env[name] = value;
  }
  env.HOME = profile.home;
  return { ...env, ...SANDBOX_PLOT_ENV, ...packageLayerEnv(profile, env.PATH ?? DEFAULT_SANDBOX_PATH), ...(profile.env ?? {}) };
}

/** The variables that tell the kernel package where its layer is (kernel/albedo/_packages.py reads them), and PATH with the layer's `bin` first. */
function packageLayerEnv(profile: SandboxProfile, path: string): Record<string, string> {
  const layer = profile.packageLayer;
  if (layer === undefined) return {};
  return {
    PATH: `${join(layer.dir, "bin")}:${path}`,
    [PACKAGES_DIR_ENV]: layer.dir,
    [PACKAGES_QUOTA_ENV]: String(layer.quotaBytes),
    [PACKAGES_WRITABLE_ENV]: layer.kind === "rw" ? "1" : "0",
  };
}

/** The bwrap command line of one launch, and the descriptors it binds from (fds 3 on). */
export interface BwrapLaunch {
  /** Everything between `bwrap` and `--`. */
  readonly args: string[];
  readonly fds: number[];
}

/** Per-launch choices: the /dev/shm size, whether a connection file is fed on the pipe after the descriptors, and the working directory (the workspace unless told). */
export interface LaunchChoices {
  readonly shmMB: number;
  readonly connection: boolean;
  readonly chdir?: string;
}

/**
 * The bwrap options for `profile` over its pinned `plan`. `--cap-drop ALL` matters most when the
 * host user is root: without it the sandbox's root could unmount the tmpfs that hides the state
 * dir. With `connection`, bwrap copies the connection file from the descriptor after the binds'.
 * No variable is set here: bwrap is started with the sandbox environment itself (sandboxEnv), since
 * its pid 1 inside keeps what bwrap started with readable at /proc/1/environ, and its options at
 * /proc/1/cmdline.
 */
export function bwrapLaunch(profile: SandboxProfile, plan: SandboxPlan, choices: LaunchChoices): BwrapLaunch {
  const { mounts, fds } = viewMounts(plan, TMPFS_HIDDEN_PATHS, [profile.stateDir, plan.places.stateDir], 3);
  const args = [
    "--die-with-parent", "--new-session",
    "--unshare-all", "--unshare-user", ...(profile.network ? ["--share-net"] : []),
    "--cap-drop", "ALL",
    "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
    // /dev is a tmpfs of its own: without a sized /dev/shm a kernel could fill RAM through it.
    "--size", String(choices.shmMB * MIB), "--tmpfs", "/dev/shm",
    ...mountArgs(mounts),
    ...(profile.network ? ["--ro-bind-try", RESOLVER_RUN_DIR, RESOLVER_RUN_DIR] : []),
    ...(choices.connection ? ["--perms", "0600", "--file", String(3 + fds.length), SANDBOX_CONNECTION_FILE] : []),
    "--chdir", choices.chdir ?? plan.places.workspace,
  ];
  return { args, fds };
}

/** The kernel argv with the connection file placeholder pointing at the sandbox's copy, when it has one. */
export function sandboxedKernelArgv(argv: readonly string[]): string[] {
  return argv.some((arg) => arg.includes(CONNECTION_FILE_PLACEHOLDER)) ? substituteConnectionFile(argv, SANDBOX_CONNECTION_FILE) : [...argv];
}
