import { ALBEDO_DIR_NAME } from "../platform/index.js";
/**
 * The kernel bridge (K-4, K-8, K-13): what a kernel process needs to reach its session's runtime,
 * as one record. A kernel the session starts gets it as environment variables; a notebook's
 * kernel (K-13) gets it as JSON from the daemon and turns it into the same variables
 * (kernel/albedo/launch.py, with names generated from BRIDGE_FIELDS).
 */

/** Every extension a session can have (K-8); `python` is always on, `skills` depends on it. */
export const EXTENSION_NAMES = ["python", "skills", "mcp"] as const;
export type ExtensionName = (typeof EXTENSION_NAMES)[number];

export interface KernelBridge {
  /** The `ipc://` address of the session's ROUTER. */
  readonly endpoint: string;
  /** The session's secret; the first frame of every kernel message. */
  readonly token: string;
  /** How long the kernel waits for one call before giving up on its own: beyond every route's deadline. */
  readonly deadlineMs: number;
  /** The largest JSON frame the runtime accepts, so the kernel refuses a bigger call without sending it. */
  readonly maxMessageBytes: number;
  /** The session's extensions, `python` first. */
  readonly extensions: readonly ExtensionName[];
}

/** What the RPC channel itself contributes to the record. */
export type RpcAccess = Omit<KernelBridge, "extensions">;

/**
 * Each field's environment variable and its member in the daemon's JSON. The sandbox passes
 * exactly these variables into a kernel (and no other ALBEDO_* one), so a name added here reaches
 * sandboxed kernels without a second list.
 */
export const BRIDGE_FIELDS = {
  endpoint: { env: "ALBEDO_RPC_ENDPOINT", json: "endpoint" },
  token: { env: "ALBEDO_RPC_TOKEN", json: "token" },
  deadlineMs: { env: "ALBEDO_RPC_DEADLINE_MS", json: "deadline_ms" },
  maxMessageBytes: { env: "ALBEDO_RPC_MAX_MESSAGE_BYTES", json: "max_message_bytes" },
  extensions: { env: "ALBEDO_EXTENSIONS", json: "extensions" },
} as const satisfies { readonly [K in keyof KernelBridge]: { readonly env: string; readonly json: string } };

/** Joins the extension names in ALBEDO_EXTENSIONS. */
export const EXTENSIONS_SEPARATOR = ",";

type Field = keyof KernelBridge;
const FIELDS = Object.keys(BRIDGE_FIELDS) as Field[];

/** The bridge's environment variable names, in field order. */
export const BRIDGE_ENV_NAMES: readonly string[] = Object.freeze(FIELDS.map((field) => BRIDGE_FIELDS[field].env));

function envText(value: KernelBridge[Field]): string {
  return Array.isArray(value) ? value.join(EXTENSIONS_SEPARATOR) : String(value);
}

/** The record as environment variables, every field set. */
export function bridgeEnv(bridge: KernelBridge): Record<string, string> {
  return Object.fromEntries(FIELDS.map((field) => [BRIDGE_FIELDS[field].env, envText(bridge[field])]));
}

/** The record as the daemon's snake_case JSON (`rpc` in the answer to a notebook kernel's POST /sessions). */
export function bridgeJson(bridge: KernelBridge): Record<string, unknown> {
  return Object.fromEntries(FIELDS.map((field) => [BRIDGE_FIELDS[field].json, bridge[field]]));
}

/**
 * Durable kernel state (K-15): the variable naming the checkpoint directory a session's kernel
 * writes (unset: the kernel checkpoints nothing), and the one set to "1" for a start that loads the
 * checkpoint before the first cell (any other start clears it). Passed into the sandbox.
 */
export const CHECKPOINT_DIR_ENV = "ALBEDO_CHECKPOINT_DIR";
export const CHECKPOINT_RESTORE_ENV = "ALBEDO_CHECKPOINT_RESTORE";

/** The variables the kernelspec gives its launcher: the albedo install to start a daemon from, and the node to run it with. */
export const LAUNCHER_INSTALL_ENV = "ALBEDO_INSTALL";
export const LAUNCHER_NODE_ENV = "ALBEDO_NODE";

/**
 * A notebook's workspace (its session's project) is the nearest directory, from the notebook's own
 * up, holding one of these; the walk looks at MAX_WORKSPACE_WALK directories at most and never takes
 * the home directory or the filesystem root. WORKSPACE_ENV, in Jupyter's environment or the
 * kernelspec's, pins it instead.
 */
export const WORKSPACE_MARKERS: readonly string[] = [ALBEDO_DIR_NAME, ".agents", ".git"];
export const MAX_WORKSPACE_WALK = 64;
export const WORKSPACE_ENV = "ALBEDO_WORKSPACE";
