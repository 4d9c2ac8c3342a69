/**
 * Bounds and deadlines of the network policy and its egress proxy (N-6). A proxy takes its own
 * values for the per-connection ones (tests shrink them); these are the defaults.
 */

/** Entries in one `allow` or `deny` list. */
export const MAX_PATTERNS = 512;
/** Characters of one PATTERN (a host name is at most 253, plus a wildcard and a port). */
export const MAX_PATTERN_LENGTH = 270;
/** Names in `presets`. */
export const MAX_PRESET_NAMES = 32;
/** Hosts under `secrets`. */
export const MAX_SECRET_HOSTS = 64;
/** Headers one secrets host adds. */
export const MAX_SECRET_HEADERS = 16;
/** Characters of a secret header's name. */
export const MAX_HEADER_NAME_LENGTH = 128;
/** Characters of a secret's `format` (`Bearer {}`). */
export const MAX_SECRET_FORMAT_LENGTH = 1024;
/** Characters of an environment variable's name (`from_env`). */
export const MAX_ENV_NAME_LENGTH = 128;
/** Bytes of a secret header's value once formatted; a longer variable is refused, not cut. */
export const MAX_SECRET_VALUE_BYTES = 8192;
/** Characters of `upstream_ca`, a path. */
export const MAX_CA_PATH_LENGTH = 4096;

/** Client connections one proxy holds at once; past it the one idle longest goes, or the new one is refused. */
export const MAX_PROXY_CONNECTIONS = 256;
/** A connection idle this long may be dropped to make room for a new one at MAX_PROXY_CONNECTIONS. */
export const EVICTABLE_IDLE_MS = 1_000;
/** Bytes of a request line (method, target, version); past it the answer is 414. */
export const MAX_REQUEST_LINE_BYTES = 8 * 1024;
/** Bytes of a request's head, request line and headers together; past it the answer is 431. */
export const MAX_HEADER_BLOCK_BYTES = 32 * 1024;
/** Headers in one request head. */
export const MAX_HEADER_COUNT = 128;
/** Bytes of an upstream response's head (forwarded and intercepted requests). */
export const MAX_RESPONSE_HEADER_BYTES = 64 * 1024;
/** How long a client has to send a whole request head, and to finish a TLS handshake with the proxy. */
export const HEADERS_TIMEOUT_MS = 10_000;
/** A connection with no byte either way for this long is closed. */
export const IDLE_TIMEOUT_MS = 120_000;
/** The longest one connection lives, however busy. */
export const CONNECTION_LIFETIME_MS = 60 * 60_000;
/** How often a proxy looks for idle and expired connections. */
export const SWEEP_INTERVAL_MS = 1_000;
/** How long a connection to an upstream address may take, all addresses tried together. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** Addresses of one name tried in turn before the proxy gives up. */
export const MAX_CONNECT_ATTEMPTS = 4;
/** How long a name lookup may take, waiting for a free lookup slot included. */
export const DNS_LOOKUP_TIMEOUT_MS = 5_000;
/**
 * Name lookups running at once in the whole process. Each holds one of libuv's four threadpool
 * threads (getaddrinfo blocks) until the resolver answers, whatever the deadline says, so file
 * reads elsewhere in the daemon keep two threads however many lookups a kernel starts.
 */
export const MAX_LOOKUPS_IN_FLIGHT = 2;
/** Lookups waiting for a slot in the whole process; past it a lookup fails at once. */
export const MAX_LOOKUPS_QUEUED = 64;
/** Addresses of one lookup looked at; more are ignored. */
export const MAX_RESOLVED_ADDRESSES = 16;
/** Characters of a request path kept in a connection's record. */
export const MAX_RECORD_PATH_CHARS = 512;

/** Bytes of a PEM file read (`upstream_ca`, the system's CA bundle, the local CA's files). */
export const MAX_PEM_FILE_BYTES = 4 * 1024 * 1024;
/** Leaf certificates a local CA keeps minted, one per intercepted host. */
export const MAX_LEAF_CERTIFICATES = 64;
/** How long a minted leaf certificate is valid. */
export const LEAF_VALIDITY_MS = 7 * 24 * 60 * 60_000;
/** A cached leaf this close to its end is minted again. */
export const LEAF_RENEW_BEFORE_MS = 24 * 60 * 60_000;
/** How long the local CA is valid; it is made again once expired. */
export const CA_VALIDITY_MS = 10 * 365 * 24 * 60 * 60_000;
/** Certificates are dated this far back, for clocks a little behind the host's. */
export const CERTIFICATE_BACKDATE_MS = 60 * 60_000;

/** Connection records a session keeps (the newest); older ones are dropped and counted. */
export const MAX_SESSION_RECORDS = 2_000;
/** Records one page of a session's list carries. */
export const MAX_RECORDS_PAGE = 200;

/**
 * How long after a host's first denial line its repeats are counted rather than shown: the
 * repeats of that window end in one line with their count, so a loop of refused requests draws
 * two lines a window, not one per request.
 */
export const DENIAL_REPEAT_WINDOW_MS = 2_000;
/** Hosts one window names on a line of their own; denials of further hosts are summed into one line at the window's end. */
export const MAX_DENIAL_HOSTS_PER_WINDOW = 16;
