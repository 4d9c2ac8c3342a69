import { randomBytes } from "node:crypto";
import { chmodSync, closeSync, linkSync, openSync, rmSync, statSync, type Stats } from "node:fs";
import Database from "better-sqlite3";
import { fileKind } from "../platform/index.js";

/** Mode of the database file. SQLite gives its -wal and -shm files the mode of the database file, whatever the umask. */
export const DATABASE_FILE_MODE = 0o600;

/** What is wrong with a database file found on disk. */
export type DatabaseFileFault = "empty" | "not_a_database" | "not_a_file" | "cannot_open" | "locked";

/** What to do about most faults: the file is albedo's, and only its owner can choose to lose it. */
const MOVE_ASIDE = "move it aside to start with no receipts, or restore it from a backup";

/** A database file that exists but cannot be used. Local (no wire code): it stops `albedo serve` with this message, which names the file and what to do. */
export class DatabaseFileError extends Error {
  override readonly name = "DatabaseFileError";
  constructor(
    readonly file: string,
    readonly fault: DatabaseFileFault,
    what: string,
    todo: string = MOVE_ASIDE,
  ) {
    super(`${file} ${what} — ${todo}`);
  }
}

/** What to do when SQLite cannot open the file or the files it keeps beside it. */
const CANNOT_OPEN = "check that it and its -wal and -shm files beside it are regular files this user may read and write, in a state dir this user may write";

/** How each connection to the file is made: its busy timeout (ms) and, for tests, a hook that hears every statement. */
export type ConnectionOptions = Pick<Database.Options, "timeout" | "verbose">;

/** SQLite's word that a file is not one of its databases, or is damaged. */
const NOT_A_DATABASE = /^SQLITE_(NOTADB|CORRUPT)/;

/**
 * Opens the SQLite database at `file` and runs `prepare` (pragmas, migrations) on it. An absent
 * file is created whole (built under a temp name, then linked into place), so a file of 0 bytes
 * always means one that was truncated. That, something other than a regular file at the path (a
 * directory), a file that is not a database and one SQLite cannot open throw DatabaseFileError
 * naming the file and what to do. Other errors (I/O, a newer schema) are thrown as they are.
 */
export function openDatabase(file: string, connection: ConnectionOptions, prepare: (db: Database.Database) => void): Database.Database {
  const found = statOf(file);
  if (found === undefined) createWhole(file, connection, prepare);
  else if (!found.isFile()) throw new DatabaseFileError(file, "not_a_file", `is ${fileKind(found)}, not a database file`, `move it out of the way (albedo then creates a new database, with no receipts); if it holds the database, restore that file here`);
  else if (found.size === 0) throw new DatabaseFileError(file, "empty", "is empty (0 bytes); it was truncated");
  // An older albedo left it as the umask had it (0644).
  chmodSync(file, DATABASE_FILE_MODE);
  return openExisting(file, connection, prepare);
}

function openExisting(file: string, connection: ConnectionOptions, prepare: (db: Database.Database) => void): Database.Database {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { ...connection, fileMustExist: true });
    prepare(db);
    return db;
  } catch (error) {
    db?.close();
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && NOT_A_DATABASE.test(code)) {
      throw new DatabaseFileError(file, "not_a_database", `is not a usable SQLite database (${(error as Error).message})`);
    }
    if (typeof code === "string" && code.startsWith("SQLITE_CANTOPEN")) {
      throw new DatabaseFileError(file, "cannot_open", `cannot be opened (${code}: ${(error as Error).message})`, CANNOT_OPEN);
    }
    throw error;
  }
}

/** Builds a new database under a private temp name and links it into place; another process that got there first wins. */
function createWhole(file: string, connection: ConnectionOptions, prepare: (db: Database.Database) => void): void {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.new`;
  try {
    // Created 0600 before SQLite sees it: SQLite would create it 0644 minus the umask.
    closeSync(openSync(temp, "wx", DATABASE_FILE_MODE));
    openExisting(temp, connection, prepare).close();
    linkSync(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${temp}${suffix}`, { force: true });
  }
}

function statOf(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}
