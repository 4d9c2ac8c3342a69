import { spawnSync } from "node:child_process";
import { chmodSync, closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DaemonLog, LOG_REPEAT_WINDOW_MS, LOG_ROTATIONS_KEPT, MAX_LOG_ENTRY_BYTES, MAX_LOG_FILE_BYTES, MAX_LOG_REPEATS, MAX_LOG_REPEAT_KEYS } from "../../src/daemon/index.js";
import { entry } from "../../src/daemon/log.js";
import { LogFile } from "../../src/daemon/logFile.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-log-");
afterEach(() => temps.cleanup());

/** A LogFile in a fresh temp dir, with the errors it counted. */
function logFile(): { file: LogFile; path: string; dropped: unknown[] } {
  const path = join(temps.make(), "daemon.log");
  const dropped: unknown[] = [];
  return { file: new LogFile(path, (error) => dropped.push(error)), path, dropped };
}

const sizeOf = (path: string) => statSync(path).size;
const modeOf = (path: string) => statSync(path).mode & 0o777;

describe(`B the daemon log is bounded: rotated at MAX_LOG_FILE_BYTES (${MAX_LOG_FILE_BYTES}), LOG_ROTATIONS_KEPT (${LOG_ROTATIONS_KEPT}) old files`, () => {
  it("a file of exactly MAX_LOG_FILE_BYTES stays; the next byte first moves it to daemon.log.1", () => {
    const { file, path } = logFile();
    expect(file.append("a".repeat(MAX_LOG_FILE_BYTES - 1) + "\n")).toBe(true);
    expect(sizeOf(path)).toBe(MAX_LOG_FILE_BYTES);
    expect(existsSync(`${path}.1`)).toBe(false);
    expect(file.append("b")).toBe(true);
    expect(sizeOf(`${path}.1`)).toBe(MAX_LOG_FILE_BYTES);
    expect(readFileSync(path, "utf8")).toBe("b");
    file.close();
  });

  it("keeps the newest LOG_ROTATIONS_KEPT rotations, 0600, and deletes older ones", () => {
    const { file, path } = logFile();
    const marks = "abcdefg".slice(0, LOG_ROTATIONS_KEPT + 2);
    for (const mark of marks) expect(file.append(mark.repeat(MAX_LOG_FILE_BYTES))).toBe(true);
    file.close();
    const firstByte = (name: string) => readFileSync(name).subarray(0, 1).toString();
    expect(firstByte(path)).toBe(marks.at(-1));
    for (let n = 1; n <= LOG_ROTATIONS_KEPT; n += 1) {
      expect(firstByte(`${path}.${n}`)).toBe(marks.at(-1 - n));
      expect(modeOf(`${path}.${n}`)).toBe(0o600);
    }
    expect(existsSync(`${path}.${LOG_ROTATIONS_KEPT + 1}`)).toBe(false);
  });

  it("makes a log and rotations left 0644 (an older launcher's redirect) private when it opens them", () => {
    const { file, path } = logFile();
    writeFileSync(path, "old\n", { mode: 0o644 });
    writeFileSync(`${path}.1`, "older\n", { mode: 0o644 });
    chmodSync(path, 0o644);
    chmodSync(`${path}.1`, 0o644);
    expect(file.append("new\n")).toBe(true);
    file.close();
    expect([modeOf(path), modeOf(`${path}.1`)]).toEqual([0o600, 0o600]);
    expect(readFileSync(path, "utf8")).toBe("old\nnew\n");
  });
});

describe("D-1 B a log write that fails is counted and dropped, never thrown", () => {
  it("a full device (/dev/full): append answers false and counts ENOSPC; the device's mode is left alone", () => {
    const mode = modeOf("/dev/full");
    const dropped: unknown[] = [];
    const file = new LogFile("/dev/full", (error) => dropped.push(error));
    expect(file.append("one\n")).toBe(false);
    expect(file.append("two\n")).toBe(false);
    expect(dropped.map((error) => (error as NodeJS.ErrnoException).code)).toEqual(["ENOSPC", "ENOSPC"]);
    file.close();
    expect(modeOf("/dev/full")).toBe(mode);
  });

  it("a log that is not a regular file (a FIFO here, /dev/null in life) is written but never renamed or rotated", () => {
    const fifo = join(temps.make(), "daemon.log");
    expect(spawnSync("mkfifo", ["-m", "0644", fifo]).status).toBe(0);
    // A reader first, so opening the FIFO for writing does not wait.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const file = new LogFile(fifo, () => undefined, { maxBytes: 8, keep: 1 });
      expect(file.append("0123456789\n")).toBe(true);
      expect(file.append("0123456789\n")).toBe(true);
      file.close();
      expect(lstatSync(fifo).isFIFO()).toBe(true);
      expect(modeOf(fifo)).toBe(0o644);
      expect(existsSync(`${fifo}.1`)).toBe(false);
    } finally {
      closeSync(reader);
    }
  });

  it("a log whose directory is missing resumes once it is there, and says how many entries were lost", () => {
    const dir = join(temps.make(), "later");
    const log = new DaemonLog({ file: join(dir, "daemon.log"), stream: process.stderr });
    log.log("warn", "lost one");
    log.log("error", "lost two");
    expect(log.stats()).toMatchObject({ file: join(dir, "daemon.log"), dropped_writes: 2, last_error: "ENOENT" });
    mkdirSync(dir);
    log.log("warn", "kept");
    log.close();
    const lines = readFileSync(join(dir, "daemon.log"), "utf8").trim().split("\n");
    expect(lines.map((line) => line.replace(/^\S+ /, ""))).toEqual(["warn log: 2 writes failed and were dropped (last error: ENOENT)", "warn kept"]);
  });

  it("a stream that fails every write (EPIPE) is counted through print and log, and its 'error' event does not throw", async () => {
    const broken = new Writable({ write: (_chunk, _encoding, done) => done(Object.assign(new Error("write EPIPE"), { code: "EPIPE" })) });
    const log = new DaemonLog({ stream: broken });
    log.guard(broken);
    log.log("error", "to a reader that went away");
    log.print(broken, "albedo serve: listening\n");
    await new Promise((resolve) => setImmediate(resolve));
    expect(log.stats()).toMatchObject({ file: null, dropped_writes: 2 });
    expect(["EPIPE", "ERR_STREAM_DESTROYED"]).toContain(log.stats().last_error);
  });
});

describe(`B repeats of one log message are summed up: MAX_LOG_REPEATS (${MAX_LOG_REPEATS}) per window`, () => {
  it("writes MAX_LOG_REPEATS entries of a message, then one line with the count of the rest", () => {
    const path = join(temps.make(), "daemon.log");
    const log = new DaemonLog({ file: path, stream: process.stderr });
    for (let n = 0; n < MAX_LOG_REPEATS + 5; n += 1) log.log("warn", "dropped a kernel message", { n });
    expect(readFileSync(path, "utf8").trim().split("\n")).toHaveLength(MAX_LOG_REPEATS);
    log.close();
    const lines = readFileSync(path, "utf8").trim().split("\n");
    expect(lines).toHaveLength(MAX_LOG_REPEATS + 1);
    expect(lines.at(-1)).toContain('log: 5 more entries "warn dropped a kernel message" in the last minute were not written');
    expect(log.stats().suppressed_entries).toBe(5);
  });

  it(`the window is LOG_REPEAT_WINDOW_MS (${LOG_REPEAT_WINDOW_MS} ms): its summary comes at its end, and the message is written again after it`, () => {
    vi.useFakeTimers();
    try {
      const path = join(temps.make(), "daemon.log");
      const log = new DaemonLog({ file: path, stream: process.stderr });
      const lines = () => readFileSync(path, "utf8").trim().split("\n");
      for (let n = 0; n <= MAX_LOG_REPEATS; n += 1) log.log("warn", "dropped a kernel message");
      vi.advanceTimersByTime(LOG_REPEAT_WINDOW_MS - 1);
      expect(lines()).toHaveLength(MAX_LOG_REPEATS);
      vi.advanceTimersByTime(1);
      expect(lines().at(-1)).toContain('log: 1 more entries "warn dropped a kernel message"');
      log.log("warn", "dropped a kernel message");
      expect(lines().at(-1)).toMatch(/ warn dropped a kernel message$/);
      log.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it(`messages beyond MAX_LOG_REPEAT_KEYS (${MAX_LOG_REPEAT_KEYS}) share one budget`, () => {
    const path = join(temps.make(), "daemon.log");
    const log = new DaemonLog({ file: path, stream: process.stderr });
    for (let n = 0; n < MAX_LOG_REPEAT_KEYS + MAX_LOG_REPEATS + 3; n += 1) log.log("error", `GET /x${n}: failed`);
    log.close();
    const lines = readFileSync(path, "utf8").trim().split("\n");
    expect(lines).toHaveLength(MAX_LOG_REPEAT_KEYS + MAX_LOG_REPEATS + 1);
    expect(lines.at(-1)).toContain('log: 3 more entries "(other messages)"');
  });

  it("the file takes info and up; without a file stderr gets warnings and errors only", () => {
    const path = join(temps.make(), "daemon.log");
    const toFile = new DaemonLog({ file: path, stream: process.stderr });
    let printed = "";
    const stream = new Writable({ write: (chunk, _encoding, done) => ((printed += String(chunk)), done()) });
    const toStream = new DaemonLog({ stream });
    for (const log of [toFile, toStream]) for (const level of ["debug", "info", "warn", "error"] as const) log.log(level, `at ${level}`);
    toFile.close();
    expect(readFileSync(path, "utf8").match(/ at \w+/g)).toEqual([" at info", " at warn", " at error"]);
    expect(printed.match(/ at \w+/g)).toEqual([" at warn", " at error"]);
  });
});

describe("B a log entry is one entry: no forged lines, cut at MAX_LOG_ENTRY_BYTES", () => {
  it("indents the continuation lines of a message, so a newline in a path cannot start a fake entry", () => {
    const text = entry(0, "warn", "pool: could not boot a spare kernel for /w\n1970-01-01T00:00:00.000Z error forged");
    expect(text).toBe("1970-01-01T00:00:00.000Z warn pool: could not boot a spare kernel for /w\n    1970-01-01T00:00:00.000Z error forged\n");
  });

  it("an entry over the bound is cut with a note naming it; one at the bound is kept whole", () => {
    const head = entry(0, "error", "").length - 1;
    const atBound = entry(0, "error", "x".repeat(MAX_LOG_ENTRY_BYTES - head));
    expect(Buffer.byteLength(atBound)).toBe(MAX_LOG_ENTRY_BYTES + 1);
    expect(atBound).not.toContain("MAX_LOG_ENTRY_BYTES");
    const over = entry(0, "error", "x".repeat(MAX_LOG_ENTRY_BYTES - head + 1));
    expect(Buffer.byteLength(over)).toBeLessThanOrEqual(MAX_LOG_ENTRY_BYTES + 1);
    expect(over).toContain(`cut at MAX_LOG_ENTRY_BYTES, ${MAX_LOG_ENTRY_BYTES}`);
  });
});
