/** Deadlines of a session's cells. */

/**
 * How long a cell gets to end after its interrupt (a turn's, a cancelled MCP call's, a deadline's)
 * before its caller stops waiting and is told the cell still runs; the next cell waits for it in
 * the kernel. One second: an interrupt the kernel takes ends a cell within milliseconds, and one
 * it ignores should not hold a turn or a call for long.
 */
export const CELL_INTERRUPT_GRACE_MS = 1_000;
