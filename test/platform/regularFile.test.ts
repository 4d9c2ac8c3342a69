import { execFileSync } from "node:child_process";
import { appendFileSync, closeSync, constants, openSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { closeQuietly, FILE_WRITE_SETTLE_MS, FileMovedError, openRegularFile, readAt, readFileBounded, readSteady, type OpenedFile } from "../../src/platform/index.js";
import { tempDirs } from "../support/tempDirs.js";

const dirs = tempDirs("albedo-regular-");
/** FIFOs made here: opened for writing at the end, so a reader the code under test left blocked gets its end of file. */
const fifos: string[] = [];
afterAll(() => {
  for (const fifo of fifos) closeSync(openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK));
  dirs.cleanup();
});

function fifoIn(dir: string, name = "pipe"): string {
  const path = join(dir, name);
  execFileSync("mkfifo", [path]);
  fifos.push(path);
  return path;
}

describe("B openRegularFile and readAt: a planted FIFO, device or link is refused, never opened blocking", () => {
  it("opens a regular file and reads a range through its descriptor", () => {
    const file = join(dirs.make(), "f.txt");
    writeFileSync(file, "0123456789");
    const opened = openRegularFile(file);
    expect(opened.kind).toBe("file");
    if (opened.kind !== "file") return;
    try {
      expect(opened.stats.size).toBe(10n);
      expect(readAt(opened.fd, 3, 4).toString()).toBe("3456");
      expect(readAt(opened.fd, 8, 4).toString()).toBe("89");
    } finally {
      closeQuietly(opened.fd);
    }
  });

  it("answers a FIFO, a directory and a device as not_regular_file", () => {
    const dir = dirs.make();
    symlinkSync("/dev/zero", join(dir, "zero"));
    expect(openRegularFile(fifoIn(dir))).toEqual({ kind: "not_regular_file", what: "a FIFO" });
    expect(openRegularFile(dir)).toEqual({ kind: "not_regular_file", what: "a directory" });
    expect(openRegularFile(join(dir, "zero"))).toEqual({ kind: "not_regular_file", what: "a device" });
  });

  it("with noFollow refuses a link, even to a regular file; without it follows the link", () => {
    const dir = dirs.make();
    writeFileSync(join(dir, "real.txt"), "x");
    symlinkSync("real.txt", join(dir, "link"));
    expect(openRegularFile(join(dir, "link"), { noFollow: true })).toEqual({ kind: "not_regular_file", what: "a symbolic link" });
    const followed = openRegularFile(join(dir, "link"));
    expect(followed.kind).toBe("file");
    if (followed.kind === "file") closeQuietly(followed.fd);
  });

  it("throws the fs error of a missing path", () => {
    expect(() => openRegularFile(join(dirs.make(), "missing"))).toThrow(expect.objectContaining({ code: "ENOENT" }));
  });
});

describe("B readFileBounded: a FIFO is refused without blocking", () => {
  it("answers a FIFO as not_regular_file and reads a regular file whole", async () => {
    const dir = dirs.make();
    expect(await readFileBounded(fifoIn(dir), 1024)).toEqual({ kind: "not_regular_file", what: "a FIFO" });
    writeFileSync(join(dir, "f"), "abc");
    expect(await readFileBounded(join(dir, "f"), 3)).toEqual({ kind: "file", bytes: Buffer.from("abc") });
    expect(await readFileBounded(join(dir, "f"), 2)).toEqual({ kind: "oversize", size: 3 });
  });
});

/** A regular file with `text`, opened. */
function openedWith(text: string): { file: string; opened: OpenedFile } {
  const file = join(dirs.make(), "f.txt");
  writeFileSync(file, text);
  const opened = openRegularFile(file);
  if (opened.kind !== "file") throw new Error("not opened");
  return { file, opened };
}

describe("R-2 B readSteady: bytes of one version of a file, or FileMovedError", () => {
  it("reads a settled file at once, synchronously", () => {
    const { opened } = openedWith("settled");
    const later = () => Date.now() + FILE_WRITE_SETTLE_MS;
    expect(readSteady(opened, () => readAt(opened.fd, 0, 7).toString(), later)).toBe("settled");
  });

  it("waits for a file changed just now to settle, then reads it", async () => {
    const { opened } = openedWith("fresh");
    // First the moment of the change itself, then a clock past the settling time.
    let looks = 0;
    const clock = () => (looks++ === 0 ? Number(opened.stats.ctimeNs / 1_000_000n) : Date.now() + FILE_WRITE_SETTLE_MS);
    const read = readSteady(opened, (stats) => readAt(opened.fd, 0, Number(stats.size)).toString(), clock);
    expect(read).toBeInstanceOf(Promise);
    expect(await read).toBe("fresh");
  });

  it("a file that changes under every read is FileMovedError after the second", async () => {
    const { file, opened } = openedWith("x");
    let reads = 0;
    const later = () => Date.now() + FILE_WRITE_SETTLE_MS;
    const read = readSteady(
      opened,
      () => {
        reads += 1;
        appendFileSync(file, "y");
      },
      later,
    );
    await expect(read).rejects.toBeInstanceOf(FileMovedError);
    expect(reads).toBe(2);
  });

  it("a ctime ahead of the clock (a skewed mount) counts as settled rather than never settling", () => {
    const { opened } = openedWith("ahead");
    expect(readSteady(opened, () => "read", () => 0)).toBe("read");
  });
});
