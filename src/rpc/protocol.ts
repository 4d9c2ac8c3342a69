import { jsonNestingDepth, parseJsonWellFormed } from "../json/index.js";
import { INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, appErrorNumber } from "./codes.js";
import { MAX_CELL_ID_CHARS, RPC_MAX_PARAMS_DEPTH } from "./limits.js";


export type JsonRpcId = string | number | null;

/** The `error` member of a JSON-RPC response. */
export interface RpcErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/** A call the kernel expects an answer to. `cell` is albedo's extension member (the parent msg_id). */
export interface RpcRequest {
  readonly id: string | number;
  readonly method: string;
  readonly params: Readonly<Record<string, unknown>>;
  readonly cell: string | undefined;
}

/** What one inbound JSON frame turned out to be. */
export type Decoded =
  | { readonly kind: "request"; readonly request: RpcRequest }
  | { readonly kind: "notification"; readonly method: string; readonly params: unknown }
  | { readonly kind: "invalid"; readonly id: JsonRpcId; readonly error: RpcErrorObject };

/** Builds an error object; `data` is left out when undefined so the wire stays minimal. */
export function errorObject(code: number, message: string, data?: unknown): RpcErrorObject {
  return data === undefined ? { code, message } : { code, message, data };
}

function invalid(id: JsonRpcId, code: number, message: string): Decoded {
  return { kind: "invalid", id, error: errorObject(code, message) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function validId(value: unknown): value is string | number {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Decodes one frame into a request, a notification, or the error to answer with. Never throws. */
export function decodeMessage(frame: Uint8Array): Decoded {
  let text: string;
  try {
    text = STRICT_UTF8.decode(frame);
  } catch {
    return invalid(null, PARSE_ERROR, "parse error: the frame is not valid UTF-8");
  }
  let value: unknown;
  try {
    value = parseJsonWellFormed(text);
  } catch {
    return invalid(null, PARSE_ERROR, "parse error: the frame is not valid JSON");
  }
  if (Array.isArray(value)) return invalid(null, INVALID_REQUEST, "batch requests are not supported");
  if (!isRecord(value)) return invalid(null, INVALID_REQUEST, "a request must be a JSON object");
  const id = validId(value.id) ? value.id : null;
  if (value.jsonrpc !== "2.0") return invalid(id, INVALID_REQUEST, 'member "jsonrpc" must be "2.0"');
  if (typeof value.method !== "string" || value.method === "") {
    return invalid(id, INVALID_REQUEST, 'member "method" must be a non-empty string');
  }
  if ("id" in value && !validId(value.id)) {
    return invalid(null, INVALID_REQUEST, 'member "id" must be a string or a finite number');
  }
  const cell = value.cell;
  if (cell !== undefined && (typeof cell !== "string" || cell.length > MAX_CELL_ID_CHARS)) {
    return invalid(id, INVALID_REQUEST, `member "cell" must be a string of at most ${MAX_CELL_ID_CHARS} characters`);
  }
  if (id === null) return { kind: "notification", method: value.method, params: value.params };
  const params = value.params ?? {};
  if (!isRecord(params)) {
    return invalid(id, INVALID_PARAMS, "params must be a JSON object of named parameters");
  }
  if (jsonNestingDepth(params, RPC_MAX_PARAMS_DEPTH) > RPC_MAX_PARAMS_DEPTH) {
    const message = `params nest arrays and objects more than ${RPC_MAX_PARAMS_DEPTH} levels deep (RPC_MAX_PARAMS_DEPTH)`;
    const data = { limit: "RPC_MAX_PARAMS_DEPTH", max: RPC_MAX_PARAMS_DEPTH };
    return { kind: "invalid", id, error: errorObject(appErrorNumber("limit_exceeded"), message, data) };
  }
  return { kind: "request", request: { id, method: value.method, params, cell } };
}

/** Returns the request id in `text` when it has a usable one, else null. Never throws. */
export function peekId(text: string): JsonRpcId {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) && validId(value.id) ? value.id : null;
  } catch {
    return null;
  }
}

/** Encodes a success response; throws when `result` cannot be serialised (cycles, BigInt). */
export function encodeResult(id: JsonRpcId, result: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", id, result: result === undefined ? null : result });
}

/** Encodes an error response. */
export function encodeError(id: JsonRpcId, error: RpcErrorObject): string {
  return JSON.stringify({ jsonrpc: "2.0", id, error });
}

/** Encodes a notification (no id, no reply expected). */
export function encodeNotification(method: string, params: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", method, params });
}
