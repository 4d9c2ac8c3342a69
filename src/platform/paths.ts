import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The package's own directory (holds package.json, priv/, kernel/), found from this module. */
export function installDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "albedo") return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error("cannot find the albedo install directory above " + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

/** The version in the install's package.json. */
export function installVersion(): string {
  return (JSON.parse(readFileSync(join(installDir(), "package.json"), "utf8")) as { version: string }).version;
}

/** The user's home directory: $HOME when set, else the OS answer. */
export function homeDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.HOME && env.HOME.length > 0 ? env.HOME : homedir());
}

/** albedo's directory inside a workspace (skills, project settings) and inside the home (the default state dir, user skills). */
export const ALBEDO_DIR_NAME = ".albedo";
/** The variable that names the state dir. */
export const STATE_DIR_ENV = "ALBEDO_HOME";

/** The state dir: $ALBEDO_HOME, default ~/.albedo. */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env[STATE_DIR_ENV];
  return resolve(configured && configured.length > 0 ? configured : join(homeDir(env), ALBEDO_DIR_NAME));
}

/** True when `path` is `base` or lies beneath it (both absolute and normalised; no link is followed). */
export function within(path: string, base: string): boolean {
  return path === base || path.startsWith(base.endsWith(sep) ? base : `${base}${sep}`);
}

/** Longest Unix socket path in bytes (sun_path holds 108 bytes on Linux, 104 on macOS, NUL included). */
export const MAX_UNIX_SOCKET_PATH_BYTES = process.platform === "darwin" ? 103 : 107;
