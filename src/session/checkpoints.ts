/**
 * A session's checkpoint directory (K-15) as the runtime sees it: `<state>/checkpoints/<session id>/`
 * (0700) holds the runtime's own record of the session (`session.json`: workspace, owner, when it
 * closed) and `kernel/`, the one directory the session's kernel writes its checkpoint into (bound
 * into that kernel's sandbox alone). The runtime never loads a pickle: it reads the kernel's restore
 * report as bounded JSON, copies files as bytes for a resume, and removes directories past the
 * receipts' retention.
 */
import { copyFileSync, lstatSync, mkdirSync, readdirSync, realpathSync } from "node:fs";
import { chmod, mkdir, readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { AppError } from "../errors/index.js";
import {
  closeQuietly, currentProcess, isSameProcessAlive, openRegularFile, processIdentityOf, readAt, readFileBounded, writeFileAtomic,
} from "../platform/index.js";
import { CHECKPOINTS_DIR } from "../sandbox/index.js";
import {
  CHECKPOINT_MANIFEST_FILE, CHECKPOINT_REPORT_FILE, CHECKPOINT_VALUES_DIR, MAX_CHECKPOINT_BYTES, MAX_CHECKPOINT_DIRS_SWEPT,
  MAX_CHECKPOINT_MANIFEST_BYTES, MAX_CHECKPOINT_NAMES, MAX_CHECKPOINT_REASON_CHARS, MAX_RESTORE_REPORT_BYTES, MAX_RESTORE_REPORT_NAMES,
} from "./limits.js";

/** The runtime's record in a checkpoint directory (the kernel cannot reach it). */
const RECORD_FILE = "session.json";
/** The directory inside a checkpoint directory that the kernel writes. */
const KERNEL_DIR = "kernel";
/** Bytes of a runtime record read. */
const MAX_RECORD_BYTES = 64 * 1024;
/** A session id as the runtime makes them (hex); nothing else names a checkpoint directory. */
const SESSION_ID = /^[0-9a-f]{1,64}$/;

/** Why a restore ran: the supervisor brought a dead kernel back, the user asked for a restart with restore, or a new session resumed a closed one. */
export type RestoreTrigger = "crash" | "restart" | "resume";

/** What a restore brought back and what it did not, as the session reports it. */
export interface RestoreReport {
  readonly trigger: RestoreTrigger;
  /** ISO time the runtime read the report. */
  readonly at: string;
  readonly restored: readonly string[];
  readonly lost: readonly { readonly name: string; readonly reason: string }[];
  /** Names beyond MAX_RESTORE_REPORT_NAMES, counted but not listed. */
  readonly unlisted: number;
  /** Why nothing could be restored (no report, an unreadable manifest), or null. */
  readonly error: string | null;
  /** One line: `restored 14 of 15 names; lost: conn (socket)`. */
  readonly summary: string;
}

const KernelReport = z.object({
  restored: z.array(z.string()),
  lost: z.record(z.string(), z.string()),
  error: z.string().nullable().optional(),
});

/** The checkpoint directory of session `id` and the kernel's part of it. */
export function checkpointPaths(stateDir: string, id: string): { readonly dir: string; readonly kernel: string; readonly record: string } {
  if (!SESSION_ID.test(id)) throw new AppError("invalid_params", `not a session id: ${JSON.stringify(id.slice(0, 80))}`);
  const dir = join(stateDir, CHECKPOINTS_DIR, id);
  return { dir, kernel: join(dir, KERNEL_DIR), record: join(dir, RECORD_FILE) };
}

/** Makes session `id`'s checkpoint directory (0700 all the way) with the runtime's record; returns the kernel's directory as a real path. */
export async function makeCheckpointDir(stateDir: string, id: string, workspace: string): Promise<string> {
  const base = join(stateDir, CHECKPOINTS_DIR);
  await mkdir(base, { recursive: true, mode: 0o700 });
  await chmod(base, 0o700);
  const paths = checkpointPaths(stateDir, id);
  await mkdir(paths.dir, { mode: 0o700 });
  await mkdir(paths.kernel, { mode: 0o700 });
  await writeFileAtomic(paths.record, `${JSON.stringify({ id, workspace, owner: currentProcess(), created_at: new Date().toISOString() })}\n`);
  return realpathSync(paths.kernel);
}

const RecordSchema = z.object({ id: z.string(), workspace: z.string(), owner: z.unknown().optional(), closed_at: z.string().optional() });
type CheckpointRecord = z.infer<typeof RecordSchema>;

/** The runtime's record of session `id`'s checkpoint, or undefined when there is none. */
export async function readCheckpointRecord(stateDir: string, id: string): Promise<CheckpointRecord | undefined> {
  const found = await readFileBounded(checkpointPaths(stateDir, id).record, MAX_RECORD_BYTES).catch(() => undefined);
  if (found?.kind !== "file") return undefined;
  try {
    const parsed = RecordSchema.safeParse(JSON.parse(found.bytes.toString("utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Marks the checkpoint closed: kept from now for the receipts' retention, resumable meanwhile. */
export async function markCheckpointClosed(stateDir: string, id: string): Promise<void> {
  const record = await readCheckpointRecord(stateDir, id);
  if (record === undefined) return;
  await writeFileAtomic(checkpointPaths(stateDir, id).record, `${JSON.stringify({ ...record, closed_at: new Date().toISOString() })}\n`).catch(() => undefined);
}

/**
 * The checkpoint a resume of session `id` starts from: its record (the workspace it ran on). Throws
 * AppError not_found when there is none, conflict while its owner still runs it (close it first).
 */
export async function resumableCheckpoint(stateDir: string, id: string): Promise<CheckpointRecord> {
  const record = await readCheckpointRecord(stateDir, id);
  if (record === undefined || record.id !== id) throw new AppError("not_found", `no checkpoint of session ${id} to resume (closed sessions' checkpoints are kept for the receipts' retention)`);
  const owner = processIdentityOf(record.owner);
  if (record.closed_at === undefined && owner !== undefined && isSameProcessAlive(owner) && owner.pid !== process.pid) {
    throw new AppError("conflict", `session ${id} is still open in another albedo process (pid ${owner.pid}); close it before resuming it`);
  }
  return record;
}

/**
 * Copies session `from`'s checkpoint into the kernel directory `to`, as bytes: the manifest and the
 * value files, regular files only (a link or FIFO the old kernel planted is skipped), within the
 * checkpoint's bounds. The new kernel judges what it finds.
 */
export function copyCheckpoint(stateDir: string, from: string, to: string): void {
  const source = checkpointPaths(stateDir, from).kernel;
  let budget = MAX_CHECKPOINT_BYTES + MAX_CHECKPOINT_MANIFEST_BYTES;
  const copy = (name: string, limit: number): void => {
    const info = lstatSync(join(source, name), { throwIfNoEntry: false });
    if (info === undefined || !info.isFile() || info.size > Math.min(limit, budget)) return;
    budget -= info.size;
    copyFileSync(join(source, name), join(to, name));
  };
  copy(CHECKPOINT_MANIFEST_FILE, MAX_CHECKPOINT_MANIFEST_BYTES);
  const values = lstatSync(join(source, CHECKPOINT_VALUES_DIR), { throwIfNoEntry: false });
  if (values === undefined || !values.isDirectory()) return;
  mkdirSync(join(to, CHECKPOINT_VALUES_DIR), { recursive: true, mode: 0o700 });
  for (const name of readdirSync(join(source, CHECKPOINT_VALUES_DIR)).slice(0, MAX_CHECKPOINT_NAMES)) {
    if (name.endsWith(".pkl")) copy(join(CHECKPOINT_VALUES_DIR, name), MAX_CHECKPOINT_BYTES);
  }
}

/**
 * The kernel's report of the restore it just ran, read without following a link and as bounded JSON
 * (the kernel wrote it: it decides nothing but what is shown).
 */
export function readRestoreReport(kernelDir: string, trigger: RestoreTrigger): RestoreReport {
  const at = new Date().toISOString();
  const failed = (error: string): RestoreReport => ({ trigger, at, restored: [], lost: [], unlisted: 0, error, summary: `nothing restored: ${error}` });
  let text: string;
  try {
    const opened = openRegularFile(join(kernelDir, CHECKPOINT_REPORT_FILE), { noFollow: true });
    if (opened.kind !== "file") return failed(`the kernel's restore report is ${opened.what}`);
    try {
      if (opened.stats.size > BigInt(MAX_RESTORE_REPORT_BYTES)) return failed(`the kernel's restore report is over ${MAX_RESTORE_REPORT_BYTES} bytes (MAX_RESTORE_REPORT_BYTES)`);
      text = readAt(opened.fd, 0, Number(opened.stats.size)).toString("utf8");
    } finally {
      closeQuietly(opened.fd);
    }
  } catch (error) {
    return failed(`the kernel wrote no restore report (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  let parsed: z.infer<typeof KernelReport>;
  try {
    const result = KernelReport.safeParse(JSON.parse(text));
    if (!result.success) return failed("the kernel's restore report is not one");
    parsed = result.data;
  } catch {
    return failed("the kernel's restore report is not JSON");
  }
  const clip = (value: string) => (value.length <= MAX_CHECKPOINT_REASON_CHARS ? value : `${value.slice(0, MAX_CHECKPOINT_REASON_CHARS - 1)}…`);
  const lostAll = Object.entries(parsed.lost);
  const restored = parsed.restored.slice(0, MAX_RESTORE_REPORT_NAMES).map(clip);
  const lost = lostAll.slice(0, Math.max(0, MAX_RESTORE_REPORT_NAMES - restored.length)).map(([name, reason]) => ({ name: clip(name), reason: clip(reason) }));
  const unlisted = parsed.restored.length + lostAll.length - restored.length - lost.length;
  const error = parsed.error ?? null;
  return { trigger, at, restored, lost, unlisted, error, summary: summarize(parsed.restored.length, lostAll.length, lost, error) };
}

/** `restored 14 of 15 names; lost: conn (socket)`. */
function summarize(restored: number, lostCount: number, lost: RestoreReport["lost"], error: string | null): string {
  const total = restored + lostCount;
  const head = total === 0 && error === null ? "nothing to restore: the checkpoint was empty" : `restored ${restored} of ${total} name${total === 1 ? "" : "s"}`;
  const tail = lost.length > 0 ? `; lost: ${lost.map((entry) => `${entry.name} (${entry.reason})`).join(", ")}` : "";
  return `${head}${tail}${error !== null ? `; ${error}` : ""}`;
}

/**
 * Removes checkpoint directories past the receipts' retention (`retentionMs`): closed that long ago,
 * or left by a process that died (a daemon killed with SIGKILL) and untouched that long. Never
 * throws; returns how many it removed.
 */
export async function sweepCheckpoints(stateDir: string, retentionMs: number, now = Date.now()): Promise<number> {
  const base = join(stateDir, CHECKPOINTS_DIR);
  const names = await readdir(base).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names.slice(0, MAX_CHECKPOINT_DIRS_SWEPT)) {
    if (!SESSION_ID.test(name)) continue;
    const record = await readCheckpointRecord(stateDir, name);
    const owner = processIdentityOf(record?.owner);
    if (record?.closed_at === undefined && owner !== undefined && isSameProcessAlive(owner)) continue;
    const touched = record?.closed_at !== undefined ? Date.parse(record.closed_at) : await lastTouched(stateDir, name);
    if (touched === undefined || Number.isNaN(touched) || now - touched > retentionMs) {
      await rm(join(base, name), { recursive: true, force: true }).catch(() => undefined);
      removed += 1;
    }
  }
  return removed;
}

/** A closed session whose checkpoint a new session can resume. */
export interface ResumableSession {
  readonly id: string;
  readonly workspace: string;
  /** When it was closed; null when the process that ran it died without closing it (a daemon killed). */
  readonly closedAt: string | null;
  /** When its kernel last wrote the checkpoint. */
  readonly checkpointedAt: string;
}

/**
 * The sessions of `stateDir` that `resume` accepts: a record, a checkpoint the kernel wrote, and no
 * live process still running them; most recently checkpointed first, MAX_CHECKPOINT_DIRS_SWEPT
 * directories read at most. Reads the runtime's records and file times only, never a value.
 */
export async function listResumable(stateDir: string): Promise<ResumableSession[]> {
  const names = await readdir(join(stateDir, CHECKPOINTS_DIR)).catch(() => [] as string[]);
  const found: ResumableSession[] = [];
  for (const name of names.slice(0, MAX_CHECKPOINT_DIRS_SWEPT)) {
    if (!SESSION_ID.test(name)) continue;
    const record = await readCheckpointRecord(stateDir, name);
    if (record === undefined || record.id !== name) continue;
    const owner = processIdentityOf(record.owner);
    if (record.closed_at === undefined && owner !== undefined && isSameProcessAlive(owner)) continue;
    const manifest = lstatSync(join(checkpointPaths(stateDir, name).kernel, CHECKPOINT_MANIFEST_FILE), { throwIfNoEntry: false });
    if (manifest === undefined || !manifest.isFile()) continue;
    found.push({ id: name, workspace: record.workspace, closedAt: record.closed_at ?? null, checkpointedAt: new Date(manifest.mtimeMs).toISOString() });
  }
  return found.sort((a, b) => b.checkpointedAt.localeCompare(a.checkpointedAt));
}

/** When the kernel last wrote the checkpoint (its manifest), else when the directory was made. */
async function lastTouched(stateDir: string, id: string): Promise<number | undefined> {
  const paths = checkpointPaths(stateDir, id);
  const manifest = lstatSync(join(paths.kernel, CHECKPOINT_MANIFEST_FILE), { throwIfNoEntry: false });
  return manifest?.mtimeMs ?? (await stat(paths.dir).catch(() => undefined))?.mtimeMs;
}
