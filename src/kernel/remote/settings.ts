/**
 * The `kernel.remote` settings section (K-12) and what one run resolves it to. Only the global
 * settings file may set it: the project file sits in a workspace a kernel can write, and a project
 * must not redirect kernels, or the token that goes with them, to a server of its choosing.
 */
import {
  MAX_REMOTE_ENV_ENTRIES, MAX_REMOTE_ENV_VALUE_LENGTH, MAX_REMOTE_NAME_LENGTH, MAX_REMOTE_URL_LENGTH,
} from "./limits.js";

/** Where the token comes from when `token_env` is not set. */
export const DEFAULT_TOKEN_ENV = "JUPYTER_TOKEN";
/** The kernelspec asked for when `kernel_name` is not set. */
export const DEFAULT_REMOTE_KERNEL_NAME = "python3";
/** The kernel variable Enterprise Gateway reads the user from (it refuses starts without it when it runs as root). */
export const KERNEL_USERNAME_ENV = "KERNEL_USERNAME";
/** Variables passed to a kernel start must carry this prefix: Enterprise Gateway forwards only these. */
export const REMOTE_ENV_PREFIX = "KERNEL_";

const FIELDS = ["url", "token_env", "kernel_name", "username", "env", "callback_url", "callback_listen"] as const;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_TOKEN_ENV_LENGTH = 128;

export interface RemoteKernelSettings {
  readonly url?: string;
  /** The NAME of the variable holding the server's token; the token itself is never a setting. */
  readonly token_env?: string;
  readonly kernel_name?: string;
  readonly username?: string;
  /** `KERNEL_*` variables for the kernel start (KERNEL_IMAGE, KERNEL_NAMESPACE, ...). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * The optional fast path: a WebSocket URL at which the kernel can reach the runtime back. `ws://`
   * only on loopback; anywhere else `wss://`, terminated in front of the runtime (see callback_listen).
   */
  readonly callback_url?: string;
  /** Where the runtime listens for callbacks (`host:port`, loopback): defaults to callback_url's own address when that is loopback. */
  readonly callback_listen?: string;
}

/** The fast path of one run: what the kernel dials, and where the runtime listens. */
export interface RemoteCallback {
  readonly url: string;
  readonly host: string;
  readonly port: number;
}

/** Everything one remote kernel start needs, resolved. */
export interface RemoteKernelOptions {
  /** The server's base URL, ending in "/". */
  readonly url: string;
  /** Sent as `Authorization: token …`; empty for a server without authentication. */
  readonly token: string;
  /** The variable the token came from, for messages (never the token). */
  readonly tokenEnv: string;
  readonly kernelName: string;
  readonly username: string | undefined;
  readonly env: Readonly<Record<string, string>>;
  /** The fast path, when `callback_url` is set. */
  readonly callback?: RemoteCallback;
}

/** Per-run choices (`--remote URL`, `POST /sessions {"remote": …}`) laid over the global section. */
export interface RemoteOverride {
  readonly url: string;
  readonly kernel_name?: string;
  readonly username?: string;
  readonly env?: Readonly<Record<string, string>>;
}

/** Resolves the global section and a per-run override into start options; undefined when neither names a URL. Throws RemoteSettingsError. */
export function resolveRemoteKernel(
  global: RemoteKernelSettings | undefined, override: RemoteOverride | undefined, env: NodeJS.ProcessEnv,
): RemoteKernelOptions | undefined {
  const url = override?.url ?? global?.url;
  if (url === undefined) return undefined;
  const problem = remoteUrlProblem(url);
  if (problem) throw new RemoteSettingsError(`remote kernel URL ${problem}`);
  const tokenEnv = global?.token_env ?? DEFAULT_TOKEN_ENV;
  const username = override?.username ?? global?.username;
  return {
    url: url.endsWith("/") ? url : `${url}/`,
    token: env[tokenEnv] ?? "",
    tokenEnv,
    kernelName: override?.kernel_name ?? global?.kernel_name ?? DEFAULT_REMOTE_KERNEL_NAME,
    username,
    env: { ...global?.env, ...override?.env, ...(username ? { [KERNEL_USERNAME_ENV]: username } : {}) },
    ...(global?.callback_url ? { callback: callbackOf(global.callback_url, global.callback_listen) } : {}),
  };
}

function callbackOf(url: string, listen: string | undefined): RemoteCallback {
  const parsed = new URL(url);
  const address = listen ?? (LOOPBACK_HOSTS.has(parsed.hostname) ? `${parsed.hostname}:${parsed.port || (parsed.protocol === "wss:" ? 443 : 80)}` : undefined);
  if (address === undefined) throw new RemoteSettingsError("kernel.remote.callback_url is not on loopback: set kernel.remote.callback_listen to the loopback address its TLS terminator forwards to");
  const at = address.lastIndexOf(":");
  return { url, host: address.slice(0, at).replace(/^\[|\]$/g, ""), port: Number(address.slice(at + 1)) };
}

/** A `kernel.remote` value or override that cannot be used. */
export class RemoteSettingsError extends Error {
  override readonly name = "RemoteSettingsError";
}

/** Problems of a `kernel.remote` section as [path, message] pairs; empty when valid. */
export function remoteSettingsProblems(value: unknown, path = "kernel.remote"): [string, string][] {
  if (!isRecord(value)) return [[path, "must be an object"]];
  const problems: [string, string][] = [];
  for (const key of Object.keys(value)) {
    if (!(FIELDS as readonly string[]).includes(key)) problems.push([`${path}.${key}`, `unknown field; ${path} allows ${FIELDS.join(", ")}`]);
  }
  for (const key of ["url", "callback_url"] as const) {
    if (!(key in value)) continue;
    const problem = typeof value[key] === "string" ? remoteUrlProblem(value[key] as string, key === "callback_url") : "must be a string";
    if (problem) problems.push([`${path}.${key}`, problem]);
  }
  if ("callback_listen" in value && !isLoopbackAddress(value.callback_listen)) {
    problems.push([`${path}.callback_listen`, "must be host:port on loopback (127.0.0.1, [::1] or localhost); a TLS terminator in front of it takes the kernel's wss:// connections"]);
  }
  if ("token_env" in value && !isEnvName(value.token_env, MAX_TOKEN_ENV_LENGTH)) {
    // The value is never quoted: a token pasted here by mistake must not reach a log through this message.
    problems.push([`${path}.token_env`, "must be the name of an environment variable (letters, digits and _), not the token itself"]);
  }
  for (const key of ["kernel_name", "username"] as const) {
    const field = value[key];
    if (key in value && (typeof field !== "string" || field.trim() === "" || field.length > MAX_REMOTE_NAME_LENGTH)) {
      problems.push([`${path}.${key}`, `must be a non-empty string of at most ${MAX_REMOTE_NAME_LENGTH} characters`]);
    }
  }
  if ("env" in value) problems.push(...envProblems(value.env, `${path}.env`));
  return problems;
}

function envProblems(value: unknown, path: string): [string, string][] {
  if (!isRecord(value)) return [[path, "must be an object of KERNEL_* variables"]];
  const entries = Object.entries(value);
  if (entries.length > MAX_REMOTE_ENV_ENTRIES) return [[path, `has ${entries.length} entries; at most ${MAX_REMOTE_ENV_ENTRIES} (MAX_REMOTE_ENV_ENTRIES)`]];
  const problems: [string, string][] = [];
  for (const [name, text] of entries) {
    if (!name.startsWith(REMOTE_ENV_PREFIX) || !isEnvName(name, MAX_TOKEN_ENV_LENGTH)) {
      problems.push([`${path}.${name}`, `only ${REMOTE_ENV_PREFIX}* variables are passed to a remote kernel`]);
    } else if (typeof text !== "string" || text.length > MAX_REMOTE_ENV_VALUE_LENGTH) {
      problems.push([`${path}.${name}`, `must be a string of at most ${MAX_REMOTE_ENV_VALUE_LENGTH} characters`]);
    }
  }
  return problems;
}

/** Why `url` cannot be a server (or callback) URL, or undefined. Credentials in it would be a token stored in settings. */
export function remoteUrlProblem(url: string, websocket = false): string | undefined {
  if (url.length > MAX_REMOTE_URL_LENGTH) return `is longer than ${MAX_REMOTE_URL_LENGTH} characters (MAX_REMOTE_URL_LENGTH)`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "must be an absolute URL";
  }
  const schemes = websocket ? ["ws:", "wss:"] : ["http:", "https:"];
  if (!schemes.includes(parsed.protocol)) return `must be a ${schemes.map((s) => s.slice(0, -1)).join(" or ")} URL`;
  // The callback carries the session's calls and token: in clear text only where nobody else can listen.
  if (websocket && parsed.protocol === "ws:" && !LOOPBACK_HOSTS.has(parsed.hostname)) return "must be wss:// when its host is not loopback";
  if (parsed.username !== "" || parsed.password !== "") return "must not carry a user name or password; the token comes from the variable token_env names";
  if (parsed.search !== "" || parsed.hash !== "") return "must not have a query or fragment (a token in a URL ends up in server logs)";
  return undefined;
}

function isLoopbackAddress(value: unknown): boolean {
  if (typeof value !== "string") return false;
  const at = value.lastIndexOf(":");
  const port = Number(value.slice(at + 1));
  return at > 0 && LOOPBACK_HOSTS.has(value.slice(0, at)) && Number.isInteger(port) && port > 0 && port < 65_536;
}

function isEnvName(value: unknown, max: number): boolean {
  return typeof value === "string" && value.length <= max && ENV_NAME.test(value);
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
