export { APP_ERROR_NUMBERS, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, appErrorCode } from "./codes.js";
export { RPC_CANCEL_METHOD, RPC_HELLO_METHOD, RpcDispatcher } from "./dispatcher.js";
export { MAX_CELL_ID_CHARS, MAX_RPC_PEERS_PER_SESSION, RPC_ARRIVAL_BYTES, RPC_ARRIVAL_MESSAGES, RPC_CALL_TIMEOUT_MS, RPC_CLIENT_DEADLINE_MARGIN_MS, RPC_FDS_PER_PEER, RPC_HARD_MESSAGE_BYTES, RPC_MAX_MESSAGE_BYTES, RPC_MAX_PARAMS_DEPTH, RPC_MAX_PENDING_CALLS, RPC_MAX_REFUSAL_PEERS, RPC_REFUSAL_WINDOW_MS } from "./limits.js";
export { RouteTable, type CallContext, type RouteHandler } from "./routes.js";
export { RPC_KERNEL_SOCKET_NAME, RpcServer, clientDeadlineMs, type AttachedPeer } from "./server.js";
export { RPC_TRACE_CHANNEL, type RpcTraceEvent } from "./trace.js";
export { answers, parametersOf, route, type RpcMethod } from "./methods.js";
