import { RPC_HARD_MESSAGE_BYTES } from "../../rpc/index.js";

/** Deadlines and bounds of remote kernels (K-12), each named once. */

/** From POST /api/kernels to a kernel that answered kernel_info over its WebSocket. */
export const REMOTE_READY_TIMEOUT_MS = 120_000;
/**
 * How long one kernel_info_request at boot may go without its reply and idle status before another
 * is sent. After a restart the server's iopub socket may rejoin the new kernel only after the
 * kernel answered the first requests, and the server skips its own nudge for a kernel that died busy.
 */
export const REMOTE_INFO_NUDGE_MS = 1_000;
/** One REST call to the server (start, interrupt, restart, shutdown, status). */
export const REMOTE_REQUEST_TIMEOUT_MS = 30_000;
/** The bootstrap's silent execute, and the comm's hello after it. */
export const REMOTE_BOOTSTRAP_TIMEOUT_MS = 60_000;
/** A restart: the server's restart call, the reconnect and the new bootstrap. */
export const REMOTE_RESTART_TIMEOUT_MS = 120_000;
/** DELETE /api/kernels/{id}; after it the connection is disposed whatever the answer. */
export const REMOTE_SHUTDOWN_TIMEOUT_MS = 15_000;
/** Creating the comm's subshell (blocking calls are answered there). */
export const REMOTE_SUBSHELL_TIMEOUT_MS = 30_000;
/** The opening WebSocket: a server that accepts TCP but never upgrades fails by this deadline. */
export const REMOTE_WS_HANDSHAKE_TIMEOUT_MS = 30_000;

/**
 * Bytes of one REST answer from the server (a kernel model, the kernelspecs). A server is not
 * trusted: past this the answer is dropped unread and the call fails naming the bound.
 */
export const MAX_REMOTE_BODY_BYTES = 4 * 1024 * 1024;
/**
 * Bytes of one WebSocket message from the server. Above any reply or call the channel carries (a
 * call is at most RPC_HARD_MESSAGE_BYTES, an output is cut to 2 MB once it arrived); a larger one
 * ends the kernel connection unread, since the socket cannot skip it.
 */
export const MAX_REMOTE_FRAME_BYTES = 64 * 1024 * 1024;
/** Characters of a server's own text (an error message, a status text) quoted in an error or the log. */
export const MAX_REMOTE_QUOTE_CHARS = 300;

/**
 * The oldest ipykernel whose main shell serves comm messages while a cell awaits. Older kernels
 * (7.3, 6.x) hold the comm reply behind the awaiting cell, so an awaited call would never return.
 */
export const MIN_IPYKERNEL_VERSION = "7.4.0";

/**
 * Kernel-side pacing of calls (comm messages on iopub). Jupyter Server 2.x drops iopub messages
 * beyond `iopub_msg_rate_limit` (1000/s) averaged over `rate_limit_window` (3 s), silently. A
 * bucket of PACE_BURST refilled at PACE_PER_S lets at most PACE_BURST + 3 * PACE_PER_S = 2,300
 * messages into any 3 s window, leaving 700 for the cell's own output.
 */
export const REMOTE_PACE_PER_S = 700;
export const REMOTE_PACE_BURST = 200;

/** Bytes of randomness in a session's callback token (256 bits). */
export const CALLBACK_TOKEN_BYTES = 32;
/** A callback connection must upgrade with its token within this, or it is dropped. */
export const CALLBACK_UNTRUSTED_TIMEOUT_MS = 5_000;
/** Largest WebSocket frame a callback may send; frames between RPC_MAX_MESSAGE_BYTES and this get the usual limit_exceeded reply. */
export const CALLBACK_MAX_FRAME_BYTES = RPC_HARD_MESSAGE_BYTES;
/** How long the kernel tries to dial the callback before it stays on the comm. */
export const CALLBACK_CONNECT_TIMEOUT_MS = 5_000;

/** Longest `kernel.remote.url`. */
export const MAX_REMOTE_URL_LENGTH = 2048;
/** Longest `kernel.remote.kernel_name` and `username`. */
export const MAX_REMOTE_NAME_LENGTH = 256;
/** Most `kernel.remote.env` entries. */
export const MAX_REMOTE_ENV_ENTRIES = 64;
/** Longest value of one `kernel.remote.env` entry. */
export const MAX_REMOTE_ENV_VALUE_LENGTH = 4096;
