/** Bounds and deadlines of the operations store (O-1). */

/** How long a receipt is kept, counted from the time inside its operation id: 7 days. */
export const RECEIPT_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** How far in the future an operation id's time may lie (client clock skew): 5 minutes. */
export const OPERATION_FUTURE_SKEW_MS = 5 * 60 * 1000;
/** Inputs of one session waiting for their turn (pending turns). */
export const MAX_QUEUED_INPUTS = 32;
/** Bytes of one message's text, and of one command's argument text. */
export const MAX_INPUT_TEXT_BYTES = 256 * 1024;
/** Characters of a session id, a command name, or an operation id as received. */
export const MAX_INPUT_NAME_LENGTH = 256;
/**
 * How long one statement may block the event loop waiting for another process's lock on the
 * database file: not at all. better-sqlite3 is synchronous, so a wait inside SQLite stalls every
 * request; callers try again asynchronously instead (retryWhileBusy).
 */
export const OPERATIONS_BUSY_TIMEOUT_MS = 0;
/** Pause between two attempts at a write another process's lock on the database file refused. */
export const STORE_BUSY_RETRY_MS = 25;
/** How long a request's write keeps trying while another process holds the database file's lock, before it is refused. */
export const STORE_BUSY_WAIT_MS = 2_000;
