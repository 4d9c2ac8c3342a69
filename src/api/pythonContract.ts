/**
 * The kernel package's copy of the kernel bridge, generated (K-4): kernel/albedo/_contract.py holds
 * the bridge's variable names, the defaults and bounds, the method names and the JSON-RPC error
 * table, all read from the TypeScript that serves them. `npm run contract` writes the file; a test
 * fails when the committed one is not what this module renders, so the two sides cannot drift.
 */
import {
  BRIDGE_FIELDS, CHECKPOINT_DIR_ENV, CHECKPOINT_RESTORE_ENV, EXTENSION_NAMES, EXTENSIONS_SEPARATOR, LAUNCHER_INSTALL_ENV, LAUNCHER_NODE_ENV, MAX_WORKSPACE_WALK,
  WORKSPACE_ENV, WORKSPACE_MARKERS,
} from "../bridge/index.js";
import type { AppErrorCode } from "../errors/index.js";
import {
  APP_ERROR_NUMBERS, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR,
  RPC_CALL_TIMEOUT_MS, RPC_CANCEL_METHOD, RPC_CLIENT_DEADLINE_MARGIN_MS, RPC_HELLO_METHOD, RPC_KERNEL_SOCKET_NAME, RPC_MAX_MESSAGE_BYTES, RPC_MAX_PENDING_CALLS, clientDeadlineMs, parametersOf, type RpcMethod,
} from "../rpc/index.js";
import { DROPPED_BYTES_METADATA, MIN_IPYKERNEL_VERSION, RPC_COMM_TARGET, RPC_REPLY_MEMBER, RPC_REPLY_SUBSHELL, STREAM_TEXT_BYTES } from "../kernel/index.js";
import {
  CHECKPOINT_MANIFEST_FILE, CHECKPOINT_REPORT_FILE, CHECKPOINT_VALUES_DIR, MAX_CHECKPOINT_BYTES,
  MAX_CHECKPOINT_MANIFEST_BYTES, MAX_CHECKPOINT_NAME_BYTES, MAX_CHECKPOINT_NAMES, MAX_CHECKPOINT_REASON_CHARS,
  MCP_CATALOG_WAIT_MS, MCP_PROGRESS_NOTIFICATION, MCP_RELOADED_NOTIFICATION, RELOAD_ROUTE_TIMEOUT_MS, SESSION_METHODS,
} from "../session/index.js";
import { API } from "./routes.js";
import type { SessionClient } from "./resources.js";
import { DAEMON_INFO_FILE, DAEMON_TOKEN_FILE, ON_DEMAND_LOG_FILE } from "./daemonFiles.js";
import { DAEMON_START_TIMEOUT_MS, HEALTH_TIMEOUT_MS, MAX_DAEMON_FILE_BYTES } from "./limits.js";
import { ALBEDO_DIR_NAME, STATE_DIR_ENV } from "../platform/index.js";
import { MAX_SETTINGS_BYTES, SETTINGS_FILE_NAME } from "../settings/index.js";

/** Who a notebook's launcher (and `%load_ext albedo`) says opens its session. */
const NOTEBOOK_CLIENT: SessionClient = "notebook";

/** The generated module, relative to the install. */
export const PYTHON_CONTRACT_FILE = "kernel/albedo/_contract.py";

/** The exception class the kernel package raises for each application code. */
const APP_EXCEPTIONS: Readonly<Record<AppErrorCode, string>> = {
  reload_required: "ReloadRequired",
  not_found: "NotFound",
  invalid_params: "InvalidParams",
  limit_exceeded: "LimitExceeded",
  forbidden: "Forbidden",
  cancelled: "Cancelled",
  timeout: "RpcTimeout",
  kernel_died: "KernelDied",
  conflict: "Conflict",
};

/** Standard codes: an unknown method reads as NotFound, bad params as InvalidParams, the rest as ProtocolError. */
const STANDARD_ERRORS: readonly (readonly [number, string, string])[] = [
  [PARSE_ERROR, "parse_error", "ProtocolError"],
  [INVALID_REQUEST, "invalid_request", "ProtocolError"],
  [METHOD_NOT_FOUND, "method_not_found", "NotFound"],
  [INVALID_PARAMS, "invalid_params", "InvalidParams"],
  [INTERNAL_ERROR, "internal_error", "ProtocolError"],
];

/**
 * What a kernel waits per call when ALBEDO_RPC_DEADLINE_MS is unset: what a session's kernel is
 * given, whose longest route is reload's (a session test holds the two equal).
 */
export const PYTHON_DEFAULT_DEADLINE_MS = clientDeadlineMs(Math.max(RPC_CALL_TIMEOUT_MS, RELOAD_ROUTE_TIMEOUT_MS));

/** A Python literal for JSON-like data: strings and numbers as JSON writes them, booleans, None, tuples of strings. */
function py(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "string" || typeof value === "number") return JSON.stringify(value);
  if (Array.isArray(value)) return `(${value.map(py).join(", ")}${value.length === 1 ? "," : ""})`;
  throw new Error(`no Python literal for ${JSON.stringify(value)}`);
}

/** `skills.list` -> `SKILLS_LIST`. */
function constantName(method: string): string {
  return method.replace(/[^A-Za-z0-9]+/g, "_").toUpperCase();
}

/** One method's lines: its name, its parameters in order (each with its default, or REQUIRED) and its summary. */
function methodLines(method: RpcMethod): string[] {
  const name = constantName(method.name);
  const params = parametersOf(method).map((p) => `(${py(p.name)}, ${p.required ? "REQUIRED" : py(p.default)})`);
  return [
    `${name} = ${py(method.name)}`,
    `${name}_PARAMS = (${params.join(", ")}${params.length === 1 ? "," : ""})`,
    `${name}_DOC = ${py(method.summary)}`,
  ];
}

function bridgeSection(): string[] {
  const fields = Object.values(BRIDGE_FIELDS);
  return [
    "# The kernel bridge's environment variables (src/bridge/contract.ts).",
    ...fields.map((field) => `${field.json.toUpperCase()}_ENV = ${py(field.env)}`),
    "# Each variable by its member in the daemon's JSON (the `rpc` answer to a notebook kernel, K-13).",
    "BRIDGE_ENV = {",
    ...fields.map((field) => `    ${py(field.json)}: ${field.json.toUpperCase()}_ENV,`),
    "}",
    `EXTENSIONS_SEPARATOR = ${py(EXTENSIONS_SEPARATOR)}`,
    `EXTENSION_NAMES = ${py(EXTENSION_NAMES)}`,
    "",
    "# Used when a variable is unset: the values a session's kernel is given.",
    `DEFAULT_DEADLINE_MS = ${py(PYTHON_DEFAULT_DEADLINE_MS)}`,
    `MAX_MESSAGE_BYTES = ${py(RPC_MAX_MESSAGE_BYTES)}`,
    "# Calls the runtime lets one session have in flight; a socket holds back its calls beyond it.",
    `MAX_PENDING_CALLS = ${py(RPC_MAX_PENDING_CALLS)}`,
    "# The socket a session's kernel binds beside the endpoint for its main loop; the runtime dials it.",
    `KERNEL_SOCKET_NAME = ${py(RPC_KERNEL_SOCKET_NAME)}`,
    "# UTF-8 bytes of text one stream message carries; the metadata member counting what was left out.",
    `STREAM_TEXT_BYTES = ${py(STREAM_TEXT_BYTES)}`,
    `DROPPED_BYTES_METADATA = ${py(DROPPED_BYTES_METADATA)}`,
  ];
}

function methodSection(): string[] {
  return [
    "# The methods a session serves (K-5): for each its name, its parameters in order with their",
    "# defaults (REQUIRED: none; None: optional, left out of the call), its summary; then the notifications.",
    "REQUIRED = Parameter.empty",
    ...SESSION_METHODS.flatMap(methodLines),
    "# How long the kernel, as it loads, waits for mcp.catalog: the runtime's wait for servers still starting, and a margin.",
    `MCP_CATALOG_AT_LOAD_DEADLINE_S = ${py((MCP_CATALOG_WAIT_MS + RPC_CLIENT_DEADLINE_MARGIN_MS) / 1000)}`,
    `CANCEL_METHOD = ${py(RPC_CANCEL_METHOD)}`,
    `HELLO_METHOD = ${py(RPC_HELLO_METHOD)}`,
    "# After a reload that added MCP servers: {servers, deadline_ms}; the kernel gains `mcp` if it had none.",
    `MCP_RELOADED_METHOD = ${py(MCP_RELOADED_NOTIFICATION)}`,
    "# While a cell's mcp.call runs: {cell, name, progress, total?, message?}, shown as a line on the cell's stderr.",
    `MCP_PROGRESS_METHOD = ${py(MCP_PROGRESS_NOTIFICATION)}`,
  ];
}

function launcherSection(): string[] {
  return [
    "# The notebook launcher (K-13): where it finds the daemon, how it asks it for a session, and its waits.",
    `STATE_DIR_ENV = ${py(STATE_DIR_ENV)}`,
    `STATE_DIR_NAME = ${py(ALBEDO_DIR_NAME)}`,
    `DAEMON_INFO_FILE = ${py(DAEMON_INFO_FILE)}`,
    `DAEMON_TOKEN_FILE = ${py(DAEMON_TOKEN_FILE)}`,
    `DAEMON_LOG_FILE = ${py(ON_DEMAND_LOG_FILE)}`,
    `MAX_STATE_FILE_BYTES = ${py(MAX_DAEMON_FILE_BYTES)}`,
    `HEALTH_PATH = ${py(API.health.path)}`,
    `SESSIONS_PATH = ${py(API.openSession.path)}`,
    "# The `client` a notebook's kernel opens its session as, so lists of sessions say whose it is.",
    `NOTEBOOK_CLIENT = ${py(NOTEBOOK_CLIENT)}`,
    `HEALTH_TIMEOUT_S = ${py(HEALTH_TIMEOUT_MS / 1000)}`,
    `DAEMON_START_DEADLINE_S = ${py(DAEMON_START_TIMEOUT_MS / 1000)}`,
    `INSTALL_ENV = ${py(LAUNCHER_INSTALL_ENV)}`,
    `NODE_ENV = ${py(LAUNCHER_NODE_ENV)}`,
    "# A notebook's workspace: the nearest directory from the notebook's up holding a marker (at most",
    "# MAX_WORKSPACE_WALK directories, never the home or the root), unless WORKSPACE_ENV pins it.",
    `WORKSPACE_ENV = ${py(WORKSPACE_ENV)}`,
    `WORKSPACE_MARKERS = ${py(WORKSPACE_MARKERS)}`,
    `MAX_WORKSPACE_WALK = ${py(MAX_WORKSPACE_WALK)}`,
    "# The global settings file, read by a launcher that reaches no daemon for its `sandbox` mode (K-14), and its bound.",
    `SETTINGS_FILE = ${py(SETTINGS_FILE_NAME)}`,
    `MAX_SETTINGS_BYTES = ${py(MAX_SETTINGS_BYTES)}`,
  ];
}

function remoteSection(): string[] {
  return [
    "# Remote kernels (K-12): the comm the runtime opens, how a blocking call asks for its reply on the",
    "# comm's subshell, and the oldest ipykernel that serves comm messages while a cell awaits.",
    `COMM_TARGET = ${py(RPC_COMM_TARGET)}`,
    `REPLY_MEMBER = ${py(RPC_REPLY_MEMBER)}`,
    `REPLY_SUBSHELL = ${py(RPC_REPLY_SUBSHELL)}`,
    `MIN_IPYKERNEL_VERSION = ${py(MIN_IPYKERNEL_VERSION)}`,
  ];
}

function checkpointSection(): string[] {
  return [
    "# Durable kernel state (K-15): the checkpoint directory's variable, the restore switch, its files and bounds.",
    `CHECKPOINT_DIR_ENV = ${py(CHECKPOINT_DIR_ENV)}`,
    `CHECKPOINT_RESTORE_ENV = ${py(CHECKPOINT_RESTORE_ENV)}`,
    `CHECKPOINT_MANIFEST_FILE = ${py(CHECKPOINT_MANIFEST_FILE)}`,
    `CHECKPOINT_VALUES_DIR = ${py(CHECKPOINT_VALUES_DIR)}`,
    `CHECKPOINT_REPORT_FILE = ${py(CHECKPOINT_REPORT_FILE)}`,
    `MAX_CHECKPOINT_NAME_BYTES = ${py(MAX_CHECKPOINT_NAME_BYTES)}`,
    `MAX_CHECKPOINT_BYTES = ${py(MAX_CHECKPOINT_BYTES)}`,
    `MAX_CHECKPOINT_NAMES = ${py(MAX_CHECKPOINT_NAMES)}`,
    `MAX_CHECKPOINT_MANIFEST_BYTES = ${py(MAX_CHECKPOINT_MANIFEST_BYTES)}`,
    `MAX_CHECKPOINT_REASON_CHARS = ${py(MAX_CHECKPOINT_REASON_CHARS)}`,
  ];
}

function errorSection(): string[] {
  const app = Object.entries(APP_EXCEPTIONS).map(([code, name]) => [APP_ERROR_NUMBERS[code as AppErrorCode], code, name] as const);
  const classes = app.flatMap(([number, code, name]) => ["", "", `class ${name}(AlbedoError):`, `    """Error code ${code}, JSON-RPC ${number}."""`]);
  return [
    ...classes,
    "",
    "",
    "# JSON-RPC error number -> (code, exception class).",
    "ERRORS = {",
    ...[...app, ...STANDARD_ERRORS].map(([number, code, name]) => `    ${number}: (${py(code)}, ${name}),`),
    "}",
  ];
}

/** The text of kernel/albedo/_contract.py. */
export function pythonContract(): string {
  return [
    "# Generated from the TypeScript runtime by `npm run contract` (src/cli/pythonContract.ts); do not edit.",
    '"""What the kernel package shares with the runtime (K-4): the bridge\'s variables, defaults and bounds,',
    'the methods with their parameters, and the JSON-RPC error table with its exception classes."""',
    "",
    "from inspect import Parameter",
    "",
    "from ._errors import AlbedoError, ProtocolError",
    "",
    ...bridgeSection(),
    "",
    ...methodSection(),
    ...launcherSection(),
    ...remoteSection(),
    ...checkpointSection(),
    ...errorSection(),
    "",
  ].join("\n");
}
