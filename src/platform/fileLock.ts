/**
 * Locks the kernel keeps for a process: taken without waiting, held until released or until the
 * process ends however it ends (kill -9 included), and seen by every process that opens the same
 * file whatever pid namespace it runs in (two containers sharing a home). No pid is written, so
 * none can be misjudged: a pid from another namespace looks dead, or like an unrelated process.
 *
 * They are SQLite's POSIX advisory locks (fcntl), taken through better-sqlite3, which albedo ships
 * already: an exclusive transaction on a file that stays empty. flock(2) would do as well, but
 * Node cannot call it, and a child `flock` process would be one more program to find and to reap.
 * A POSIX lock belongs to the process and is dropped when any descriptor on its file closes, so
 * nothing in this process opens a lock file except through here; SQLite's own connections to it
 * keep the lock (it delays closing their descriptors until the lock is gone).
 */
import { chmodSync } from "node:fs";
import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";
import { PRIVATE_FILE_MODE } from "./atomicWrite.js";

const require = createRequire(import.meta.url);
let loaded: typeof BetterSqlite3 | undefined;

/** better-sqlite3, loaded by the first lock rather than by every process that imports the platform (`albedo --version` takes none). */
function sqlite(): typeof BetterSqlite3 {
  loaded ??= require("better-sqlite3") as typeof BetterSqlite3;
  return loaded;
}

/** A lock this process holds on a file. */
export interface FileLock {
  /** Lets the lock go; later calls do nothing. */
  release(): void;
}

/** SQLite's answer when another connection holds a lock a statement needs (extended codes included). */
const BUSY = /^SQLITE_(BUSY|LOCKED)/;

/** True when `error` is SQLite (better-sqlite3) refusing a statement because another connection holds the lock it needs; the statement changed nothing. */
export function isSqliteBusy(error: unknown): boolean {
  return error instanceof Error && error.name === "SqliteError" && BUSY.test(String((error as { code?: unknown }).code));
}

/**
 * Takes the lock on `file` (created empty, mode 0600, when absent) without waiting: returns it,
 * or undefined while another holder, in this process or any other, has it. The file is kept when
 * the lock is released: a file removed while a waiter has it open could be locked twice. Throws
 * the error (SQLite's or the filesystem's) when `file` cannot be opened or is not a lock file.
 */
export function tryLockFile(file: string): FileLock | undefined {
  const Database = sqlite();
  const db = new Database(file, { timeout: 0 });
  try {
    // BEGIN EXCLUSIVE on an empty file prepares a header it never writes; kept in memory, it leaves no journal behind.
    db.pragma("journal_mode = MEMORY");
    db.exec("BEGIN EXCLUSIVE");
    // Made by SQLite 0644 less the umask; chmod touches no descriptor, so the lock stays.
    chmodSync(file, PRIVATE_FILE_MODE);
  } catch (error) {
    db.close();
    if (isSqliteBusy(error)) return undefined;
    throw error;
  }
  return {
    release: () => {
      if (db.open) db.close();
    },
  };
}
