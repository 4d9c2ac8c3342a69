/** Bounds and deadlines of the daemon's HTTP contract: what a request may carry, what a client waits for and reads. */

/** Bytes of one request body; a larger body is refused with 413 before it is parsed. */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024;
/** Characters of a client-chosen execution id. */
export const MAX_EXECUTION_ID_LENGTH = 64;
/** Characters of a workspace path in a request. */
export const MAX_PATH_LENGTH = 4_096;
/** The longest HMAC key a notebook's relay may give (K-14); Jupyter's are 36-character UUIDs. */
export const MAX_RELAY_KEY_LENGTH = 256;
/** How long `GET /health` may take before a client counts the daemon as gone. */
export const HEALTH_TIMEOUT_MS = 2_000;
/** Transcript rows one `GET /sessions/{id}/transcript` answers at most; `after` pages on. */
export const MAX_TRANSCRIPT_PAGE_ROWS = 1_000;
/** Bytes read from daemon.json or daemon.token; they are tiny, a larger file is not ours. */
export const MAX_DAEMON_FILE_BYTES = 4096;
/** Bytes of a response body the client accepts. */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
/** PATTERNs one `PATCH /sessions/{id}/network` may allow or deny at once. */
export const MAX_NETWORK_EDIT_PATTERNS = 64;
/** How long a daemon started for a command (or by a notebook's launcher) may take to answer GET /health. */
export const DAEMON_START_TIMEOUT_MS = 30_000;
