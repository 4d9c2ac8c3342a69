export { APP_ERROR_NUMBERS, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, appErrorCode } from "./codes.js";
export { RPC_CALL_TIMEOUT_MS, RPC_CANCEL_METHOD, RPC_HELLO_METHOD, RPC_MAX_MESSAGE_BYTES, RPC_MAX_PENDING_CALLS, RpcDispatcher } from "./dispatcher.js";
export { MAX_RPC_PEERS_PER_SESSION, RPC_FDS_PER_PEER, RPC_MAX_REFUSAL_PEERS, RPC_REFUSAL_WINDOW_MS } from "./limits.js";
export { MAX_CELL_ID_CHARS, RPC_MAX_PARAMS_DEPTH } from "./protocol.js";
export { RouteTable, type CallContext, type RouteHandler } from "./routes.js";
export { MAX_IPC_PATH_BYTES, RPC_ARRIVAL_BYTES, RPC_ARRIVAL_MESSAGES, RPC_CLIENT_DEADLINE_MARGIN_MS, RPC_HARD_MESSAGE_BYTES, RPC_KERNEL_SOCKET_NAME, RpcServer, clientDeadlineMs, type AttachedPeer } from "./server.js";
export { RPC_TRACE_CHANNEL, type RpcTraceEvent } from "./trace.js";
export { answers, parametersOf, route, type RpcMethod } from "./methods.js";
