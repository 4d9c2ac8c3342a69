import { isSqliteBusy } from "../platform/index.js";

/** What kind of storage failure a request met: the disk is full, another process holds the database locked, or the storage failed otherwise. */
export interface StorageFault {
  readonly code: "insufficient_storage" | "storage_busy" | "storage_unavailable";
  /** The SQLite result code or errno, e.g. SQLITE_FULL, ENOSPC, EROFS. */
  readonly cause: string;
  /** The file a filesystem call failed on, when it says. */
  readonly path?: string;
}

/** Codes that mean there is no room left: SQLite's and the filesystem's (a full disk, a spent quota). */
const FULL = new Set(["SQLITE_FULL", "ENOSPC", "EDQUOT"]);
/** SQLite result codes (extended ones such as SQLITE_IOERR_WRITE included) that say the database file, not the request, failed. */
const SQLITE_FAULTS = ["SQLITE_IOERR", "SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_PROTOCOL", "SQLITE_NOLFS"];
/** Errnos of a failed filesystem call that say the storage under the state dir failed. */
const FS_FAULTS = new Set(["EIO", "EROFS", "EACCES", "EPERM", "EMFILE", "ENFILE"]);

/**
 * The storage fault behind a thrown error, or undefined when it is something else (a bug, a bad
 * request). Recognises better-sqlite3's SqliteError and Node's fs errors by their `code`, so it
 * needs neither library's types; a plain Error with no code is never a storage fault.
 */
export function storageFault(error: unknown): StorageFault | undefined {
  if (!(error instanceof Error)) return undefined;
  const { code, syscall, path } = error as NodeJS.ErrnoException;
  if (typeof code !== "string") return undefined;
  const isSqlite = error.name === "SqliteError" && code.startsWith("SQLITE_");
  // An fs error carries the syscall that failed; a code alone (an AppError, say) is not one.
  const isFs = typeof syscall === "string";
  if (!isSqlite && !isFs) return undefined;
  const where = typeof path === "string" ? { path } : {};
  if (FULL.has(code)) return { code: "insufficient_storage", cause: code, ...where };
  if (isSqliteBusy(error)) return { code: "storage_busy", cause: code };
  if (isSqlite ? SQLITE_FAULTS.some((base) => code === base || code.startsWith(`${base}_`)) : FS_FAULTS.has(code)) {
    return { code: "storage_unavailable", cause: code, ...where };
  }
  return undefined;
}

/** The problem detail for a fault: what failed and what to do. Retrying is safe: writes are transactions or atomic renames, and events carry their operation id. */
export function storageDetail(fault: StorageFault): string {
  const where = fault.path ?? (fault.cause.startsWith("SQLITE_") ? "the daemon's database (albedo.db in the state dir)" : "a file the daemon writes");
  if (fault.code === "insufficient_storage") return `no space left for ${where} (${fault.cause}) — free space on that disk, then send the request again`;
  if (fault.code === "storage_busy") return `another process holds ${where} locked (${fault.cause}); nothing was changed — send the request again after Retry-After seconds`;
  return `the daemon could not use ${where} (${fault.cause}) — see the daemon's log, then send the request again`;
}
