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
