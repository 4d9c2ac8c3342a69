/** Deadlines of a session's cells. */

/**
 * How long a cell gets to end after its interrupt (a turn's, a cancelled MCP call's, a deadline's)
 * before its caller stops waiting and is told the cell still runs; the next cell waits for it in
 * the kernel. One second: an interrupt the kernel takes ends a cell within milliseconds, and one
 * it ignores should not hold a turn or a call for long.
 */
export const CELL_INTERRUPT_GRACE_MS = 1_000;

/** In the checkpoint directory: the kernel's manifest of names, its dill files, and its report of a restore. */
export const CHECKPOINT_MANIFEST_FILE = "manifest.json";
export const CHECKPOINT_VALUES_DIR = "values";
export const CHECKPOINT_REPORT_FILE = "restored.json";
/** Pickled bytes of one name; a larger value is left out and said. */
export const MAX_CHECKPOINT_NAME_BYTES = 64 * 1024 * 1024;
/** Pickled bytes of one session's checkpoint; past it the names written longest ago leave first. */
export const MAX_CHECKPOINT_BYTES = 256 * 1024 * 1024;
/** Names one checkpoint holds. */
export const MAX_CHECKPOINT_NAMES = 4096;
/** Bytes of the kernel's manifest a restoring kernel reads. */
export const MAX_CHECKPOINT_MANIFEST_BYTES = 4 * 1024 * 1024;
/** Characters of one reason a name was left out or failed. */
export const MAX_CHECKPOINT_REASON_CHARS = 200;
/** Bytes of a restore report the runtime reads (JSON, written by the kernel). */
export const MAX_RESTORE_REPORT_BYTES = 1024 * 1024;
/** Names of a restore report the runtime keeps and shows; the rest are counted. */
export const MAX_RESTORE_REPORT_NAMES = 4096;
/** Checkpoint directories one sweep examines. */
export const MAX_CHECKPOINT_DIRS_SWEPT = 1024;
/** How long a turn waits, after its kernel died, for the supervisor's restart to report its restore before it goes on untold. */
export const RESTORE_SETTLE_MS = 60_000;
