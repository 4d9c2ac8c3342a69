/**
 * The bwrap profile of one kernel (K-10): which paths it sees and how, its namespaces, and its
 * environment. Pure argument building; nothing here starts a process.
 */
import { statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { exposure, hiding, mountArgs, orderMounts, realPathOrUndefined, type Mount } from "./mounts.js";

/** PATH inside the sandbox when the spawn environment gives none. */
export const DEFAULT_SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin";
/** Locale inside the sandbox when the spawn environment gives none. */
export const DEFAULT_SANDBOX_LANG = "C.UTF-8";
/**
 * Variables copied from the spawn environment into the sandbox; everything else (API keys, the
 * runtime's own settings) is dropped. JPY_PARENT_PID is left out on purpose: inside the pid
 * namespace the kernel's parent is pid 1, which ipykernel's parent poller reads as "the runtime
 * died" and exits; --die-with-parent does that job instead.
 */
export const PASS_ENV_NAMES: readonly string[] = [
  "PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "TZ",
  "PYTHONPATH", "PYTHONUNBUFFERED", "PYTHONIOENCODING", "PYTHONDONTWRITEBYTECODE",
  "ALBEDO_EXTENSIONS", "JPY_SESSION_NAME",
];
/** Prefixes of variables copied from the spawn environment: the kernel's RPC settings. */
export const PASS_ENV_PREFIXES: readonly string[] = ["ALBEDO_RPC_"];
/** Kept visible under the hidden /run when network is allowed, so DNS through systemd-resolved works. */
export const RESOLVER_RUN_DIR = "/run/systemd/resolve";

export interface SandboxProfile {
  /** Read-write; the kernel's working directory. Must exist. */
  readonly workspace: string;
  /** The session's own 0700 run dir (connection file, IPC sockets); read-write. Must exist. */
  readonly runDir: string;
  /** $ALBEDO_HOME: hidden entirely except `runDir` (and skill roots inside it). */
  readonly stateDir: string;
  /** The user's home: hidden except what is exposed below; HOME inside points at the empty tmpfs. */
  readonly home: string;
  /** Skill roots, read-only; links are followed, missing roots skipped. */
  readonly skillRoots: readonly string[];
  /** More read-only paths, e.g. the resolved targets of linked skill directories from the snapshot. */
  readonly extraReadOnly?: readonly string[];
  /** The interpreter's venv, base install and `<install>/kernel`, read-only. */
  readonly pythonPaths: readonly string[];
  /** Share the host network; default false (a private network namespace with only loopback). */
  readonly network?: boolean;
  /** Set inside the sandbox last, over everything (e.g. the RPC address and token). */
  readonly env?: Readonly<Record<string, string>>;
}

/** The directory at `path` resolved through links; throws naming `what` when it is not an existing directory. */
function requireDir(what: string, path: string): string {
  if (!isAbsolute(path)) throw new Error(`sandbox ${what} must be an absolute path: ${path}`);
  const real = realPathOrUndefined(path);
  if (real === undefined || !statSync(real).isDirectory()) throw new Error(`sandbox ${what} is not an existing directory: ${path}`);
  return real;
}

/** The ordered mounts of `profile`; throws when the workspace or run dir is not an existing directory. */
export function profileMounts(profile: SandboxProfile, toolPaths: readonly string[] = []): Mount[] {
  requireDir("workspace", profile.workspace);
  requireDir("run dir", profile.runDir);
  const mounts: Mount[] = [
    ...hiding("hide", "/tmp"),
    ...hiding("hide", "/run"),
    ...(profile.network ? exposure("ro", RESOLVER_RUN_DIR) : []),
    ...hiding("hide", profile.home),
    ...hiding("hide-always", profile.stateDir),
    ...[...profile.pythonPaths, ...profile.skillRoots, ...(profile.extraReadOnly ?? []), ...toolPaths].flatMap((p) => exposure("ro", p)),
    ...exposure("rw", profile.workspace),
    ...exposure("rw", profile.runDir),
  ];
  return orderMounts(mounts);
}

/** The environment inside the sandbox: defaults, then allow-listed spawn variables, then `profile.env`. */
export function sandboxEnv(profile: SandboxProfile, spawnEnv: Readonly<Record<string, string | undefined>> = {}): Record<string, string> {
  const env: Record<string, string> = { PATH: DEFAULT_SANDBOX_PATH, LANG: DEFAULT_SANDBOX_LANG };
  for (const [name, value] of Object.entries(spawnEnv)) {
    if (value === undefined) continue;
    if (PASS_ENV_NAMES.includes(name) || PASS_ENV_PREFIXES.some((prefix) => name.startsWith(prefix))) env[name] = value;
  }
  env.HOME = profile.home;
  return { ...env, ...(profile.env ?? {}) };
}

/**
 * The bwrap options (everything between `bwrap` and `--`) for `profile`. `--cap-drop ALL` matters
 * most when the host user is root: without it the sandbox's root could unmount the tmpfs that
 * hides the state dir.
 */
export function bwrapArgs(profile: SandboxProfile, env: Readonly<Record<string, string>>, toolPaths: readonly string[] = []): string[] {
  const workspace = requireDir("workspace", profile.workspace);
  const args = [
    "--die-with-parent", "--new-session",
    "--unshare-all", "--unshare-user", ...(profile.network ? ["--share-net"] : []),
    "--cap-drop", "ALL",
    "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
    ...mountArgs(profileMounts(profile, toolPaths)),
    "--chdir", workspace,
    "--clearenv",
  ];
  for (const [name, value] of Object.entries(env).sort(([a], [b]) => a.localeCompare(b))) args.push("--setenv", name, value);
  return args;
}
