/** Bounds of the RPC channel's refusal log (B: a kernel must not be able to grow the daemon's log without limit). */

/** Window in which a peer's refused messages are counted; its first refusal is logged at once, the rest in one line at the window's end. */
export const RPC_REFUSAL_WINDOW_MS = 60_000;
/** Peers whose refusals are logged and counted one by one per window; refusals of further peers are counted together. */
export const RPC_MAX_REFUSAL_PEERS = 16;
