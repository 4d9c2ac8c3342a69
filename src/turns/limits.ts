/** Bounds and deadlines of a model turn (O-3, O-5, O-8). */

/** Model replies one turn may act on; the next one past this ends the turn as failed (a runaway loop). */
export const MAX_TURN_STEPS = 32;
/** Bytes of one tool result sent back to the model; more is cut, with a note saying how much. */
export const MAX_TOOL_RESULT_BYTES = 16 * 1024;
/** Bytes the `read` tool returns at most per call (`limit` may ask for less). */
export const MAX_READ_TOOL_BYTES = 64 * 1024;
/** Bytes of a file the `read` tool opens at all; a larger file is refused. */
export const MAX_READ_TOOL_FILE_BYTES = 16 * 1024 * 1024;
/** Characters per estimated token when the endpoint reports no usage (O-8). */
export const CHARS_PER_TOKEN = 4;
/** Share of `context_tokens` a request may fill before older turns are compacted; the rest is room for the reply. */
export const COMPACTION_THRESHOLD = 0.8;
/** Most recent turns never folded into a summary. */
export const KEPT_RECENT_TURNS = 2;
/** Characters of the older conversation shown to the model when asking it for a summary. */
export const MAX_SUMMARY_SOURCE_CHARS = 200_000;
/** How long an interrupt may take to end a running turn before it is abandoned as interrupted anyway. */
export const TURN_INTERRUPT_TIMEOUT_MS = 1_000;
/** Transcript rows one conversation keeps in memory (older ones stay in the store). */
export const MAX_LIVE_TRANSCRIPT_ROWS = 10_000;
/**
 * Images one model request carries at most (I-2): the newest ones of the conversation; older ones
 * are replaced by a note that says so, in what is sent and in what is kept. Eight is two cells at
 * MAX_IMAGES_PER_EXECUTION, about 12,000 tokens of images on either provider's pricing of a
 * 1568-pixel image, so a plotting session does not crowd out its own history.
 */
export const MAX_IMAGES_IN_CONTEXT = 8;
/** Characters an image counts as when a request's size is estimated for compaction (about 1,500 tokens at CHARS_PER_TOKEN). */
export const IMAGE_ESTIMATE_CHARS = 6_000;
/**
 * How long a python step waits, after its cell ended, for the connections it opened through the
 * egress proxy to close (their records arrive as they close) before its `network` rows are drawn;
 * a connection the kernel keeps open longer is not in them.
 */
export const NETWORK_STEP_SETTLE_MS = 500;
/** `network` rows one python step draws (one per host and decision); the hosts past it are summed in one notice row. */
export const MAX_NETWORK_ROWS_PER_STEP = 16;
