/**
 * A resource rewritten in place (not swapped by a rename) while pages of it are read: every page
 * answered is of one version, whole, or the read is a "conflict" to retry; never a page that mixes
 * old and new bytes or ends early.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AppError } from "../../src/errors/index.js";
import { discoverCatalog, findSkill, type SkillEntry } from "../../src/skills/index.js";
import { readResource, type ReadResult } from "../../src/skills/read.js";
import { layout, writeFile } from "./fixtures.js";
import { roots, writeSkill } from "../support/skills.js";
import { tempDirs } from "../support/tempDirs.js";
import { poll } from "../support/poll.js";

const temps = tempDirs("albedo-skills-");
const PAGE = 16 * 1024;
const PAGES = 3;
/** Reads go on until the writer has paused this often (so they meet bursts and pauses alike); this many are under way at once. */
const PAUSES = 6;
const READS_AT_ONCE = 50;

/** The writer rewrites without a pause for this long, then stands still for PAUSE_MS, and again. */
const BURST_MS = 100;
const PAUSE_MS = 150;

/**
 * Rewrites FILE version after version (each byte of version v is the digit v % 10), in bursts,
 * until the file STOP exists: "pwrite" over the same bytes through one descriptor, "truncate" as a
 * plain non-atomic save. Reads in a burst race the writes; reads in a pause find the file still.
 */
const WRITER = `
const fs = require("node:fs");
const [file, how, size, stop] = [process.argv[1], process.argv[2], Number(process.argv[3]), process.argv[4]];
const fd = how === "pwrite" ? fs.openSync(file, "r+") : -1;
const pause = new Int32Array(new SharedArrayBuffer(4));
let burstEnds = Date.now() + ${BURST_MS};
for (let version = 1; !fs.existsSync(stop); version++) {
  const bytes = Buffer.alloc(size, 48 + (version % 10));
  if (how === "pwrite") fs.writeSync(fd, bytes, 0, size, 0); else fs.writeFileSync(file, bytes);
  if (version === 1) process.stdout.write("writing\\n");
  if (Date.now() < burstEnds) continue;
  process.stdout.write("pause\\n");
  Atomics.wait(pause, 0, 0, ${PAUSE_MS});
  burstEnds = Date.now() + ${BURST_MS};
}`;

interface Writer {
  readonly child: ChildProcess;
  /** Pauses the writer has begun. */
  pauses(): number;
  readonly exited: Promise<unknown>;
  readonly stopFile: string;
}

let writer: Writer | undefined;
afterEach(async () => {
  if (writer && writer.child.exitCode === null && writer.child.signalCode === null) writer.child.kill("SIGKILL");
  await writer?.exited;
  writer = undefined;
  temps.cleanup();
});

async function startWriter(file: string, how: "pwrite" | "truncate"): Promise<Writer> {
  const stopFile = `${file}.stop`;
  const child = spawn(process.execPath, ["-e", WRITER, file, how, String(PAGE * PAGES), stopFile], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  writer = { child, exited: new Promise((resolve) => child.once("exit", resolve)), stopFile, pauses: () => out.split("pause").length - 1 };
  await poll(() => out.includes("writing"), { what: "the writer to start rewriting" });
  return writer;
}

/** Asks the writer to stop after a whole version and waits until it has. */
async function stopWriter(running: Writer): Promise<void> {
  writeFile(running.stopFile, "");
  await running.exited;
}

async function rewrittenSkill(): Promise<{ entry: SkillEntry; file: string }> {
  const dirs = layout(temps.make("albedo-rewrite-"));
  const dir = writeSkill(roots.wsAlbedo(dirs.workspace), "demo");
  const file = join(dir, "pages.txt");
  writeFile(file, Buffer.alloc(PAGE * PAGES, "0"));
  const entry = findSkill(await discoverCatalog(dirs), "demo");
  if (entry === undefined) throw new Error("demo skill not discovered");
  return { entry, file };
}

/** What one read gave: a page, or the code of the AppError it failed with. */
async function readOnce(entry: SkillEntry, index: number): Promise<ReadResult | string> {
  try {
    return await readResource(entry, "pages.txt", (index % PAGES) * PAGE, PAGE);
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
}

/**
 * Why a page is not one whole page of one version, or undefined when it is. An empty file is one
 * of the versions a truncating writer leaves, for as long as it waits between truncating and writing.
 */
function flaw(page: ReadResult): string | undefined {
  if (page.size === 0 && page.content === "" && page.next_offset === null) return undefined;
  if (page.size !== PAGE * PAGES) return `size ${page.size}`;
  if (page.content.length !== PAGE) return `a short page: ${page.content.length} bytes at ${page.offset}`;
  const versions = new Set(page.content);
  if (versions.size !== 1) return `versions ${[...versions].join(",")} mixed at ${page.offset}`;
  return undefined;
}

describe("R-2 R-4 B a resource rewritten in place while it is read", () => {
  for (const how of ["pwrite", "truncate"] as const) {
    it(`by ${how}: every page answered is whole and of one version, the rest are conflicts; once the writer stops, a read answers`, async () => {
      const { entry, file } = await rewrittenSkill();
      const running = await startWriter(file, how);
      const flaws: string[] = [];
      const codes = new Set<string>();
      let answered = 0;
      let reads = 0;
      for (; running.pauses() < PAUSES; reads += READS_AT_ONCE) {
        const batch = await Promise.all(Array.from({ length: READS_AT_ONCE }, (_, at) => readOnce(entry, reads + at)));
        for (const got of batch) {
          if (typeof got === "string") codes.add(got);
          else answered++;
          if (typeof got !== "string" && flaw(got) !== undefined) flaws.push(flaw(got)!);
        }
      }
      await stopWriter(running);
      expect(flaws.slice(0, 5), `${flaws.length} flawed pages of ${reads}`).toEqual([]);
      expect([...codes].filter((code) => code !== "conflict")).toEqual([]);
      // Reads that fell in a pause were answered: refusing every read would pass none of this.
      expect(answered).toBeGreaterThan(0);
      // Just rewritten: the read waits for the file to settle, then answers.
      const last = await readResource(entry, "pages.txt", PAGE, PAGE);
      expect(flaw(last)).toBeUndefined();
      expect(last.content).toHaveLength(PAGE);
    });
  }
});
