/** Bounds of the RPC channel: its refusal log and its connections (B: a kernel must not be able to grow the daemon's log or descriptor table without limit). */

/** Window in which a peer's refused messages are counted; its first refusal is logged at once, the rest in one line at the window's end. */
export const RPC_REFUSAL_WINDOW_MS = 60_000;
/** Peers whose refusals are logged and counted one by one per window; refusals of further peers are counted together. */
export const RPC_MAX_REFUSAL_PEERS = 16;
/**
 * Connections one session's public RPC socket holds at once (threads, event loops and scripts of
 * the kernel; its main loop has its own socket, dialled by the runtime). Each costs the runtime
 * three descriptors (RPC_FDS_PER_PEER); past the bound new ones are closed as they arrive and the
 * socket stops listening until one ends.
 */
export const MAX_RPC_PEERS_PER_SESSION = 32;
/** Descriptors the runtime holds per connection to the public socket: the accepted one, the relay's own, and the ROUTER's end of it. */
export const RPC_FDS_PER_PEER = 3;
/** How often the runtime tries to reach the kernel's own socket while it is not up (boot, restart). */
export const RPC_DIAL_RETRY_MS = 10;
/** Largest JSON frame accepted or sent, in bytes; checked before parsing (B: oversized RPC messages). */
export const RPC_MAX_MESSAGE_BYTES = 1024 * 1024;
/** Default server-side deadline of one call; routes may set their own. */
export const RPC_CALL_TIMEOUT_MS = 30_000;
/** Most calls one session may have in flight at once. */
export const RPC_MAX_PENDING_CALLS = 256;
/** Most kernel-side listeners (peers that said hello) remembered for notifications. */
export const RPC_MAX_LISTENERS = 16;
/**
 * ZeroMQ's own inbound cap, in bytes: a peer sending a bigger frame is disconnected by libzmq before
 * the frame is buffered whole. Frames between RPC_MAX_MESSAGE_BYTES and this cap get an error reply.
 */
export const RPC_HARD_MESSAGE_BYTES = 8 * RPC_MAX_MESSAGE_BYTES;
/** Bytes of randomness in a session token (hex-encoded on the wire). */
export const RPC_TOKEN_BYTES = 32;
/** Margin the kernel waits beyond the server deadline before giving up on its own. */
export const RPC_CLIENT_DEADLINE_MARGIN_MS = 5_000;
/**
 * Most messages, and bytes (checked after each message), taken off the socket as one arrival before
 * any is served: enough to share the disk checks of a burst, few enough that the first call of
 * a long burst is not held back for long.
 */
export const RPC_ARRIVAL_MESSAGES = 64;
export const RPC_ARRIVAL_BYTES = RPC_MAX_MESSAGE_BYTES;
/** Longest `cell` tag accepted on a request; Jupyter msg_ids are UUID-sized. */
export const MAX_CELL_ID_CHARS = 256;
/**
 * Deepest nesting of arrays and objects in a request's `params` (the params object itself is 1).
 * Handlers and their error messages serialise params with recursive code (JSON.stringify), which
 * overflows the stack a few thousand levels down; a 1 MiB frame can nest far deeper.
 */
export const RPC_MAX_PARAMS_DEPTH = 64;
