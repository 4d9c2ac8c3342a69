/**
 * Approvals of project-file servers (M-1). A cloned repository may carry a settings file naming a
 * server; it starts only once the user approved that exact entry in that workspace. An approval
 * is the sha256 of the entry's canonical JSON and the digest of the workspace files the entry
 * names (its script, its module's package: entryFiles), so a change to either needs a new one.
 * They live in the state dir (never in the workspace, which a kernel can write), 0600, written
 * atomically under their own lock (this domain sits below settings and cannot take its lock).
 */
import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { AppError } from "../errors/index.js";
import { canonicalJson } from "../json/index.js";
import { readFileBounded, tryLockFile, writeFileAtomic, type FileLock } from "../platform/index.js";
import { MAX_MCP_APPROVALS, MAX_MCP_APPROVALS_BYTES, MCP_APPROVALS_LOCK_RETRY_MS, MCP_APPROVALS_LOCK_TIMEOUT_MS } from "./limits.js";
import { entryFiles } from "./entryFiles.js";
import { isStdioEntry, type McpServerEntry } from "./section.js";

/** The approvals file in the state dir. */
export const MCP_APPROVALS_FILE = "mcp-approvals.json";
/** The lock writers of that file hold. */
export const MCP_APPROVALS_LOCK_FILE = "mcp-approvals.lock";
const FILE_VERSION = 1;

/** One approval: this entry (by hash) under this name, in this workspace. */
export interface McpApproval {
  readonly workspace: string;
  readonly name: string;
  readonly hash: string;
  /** The digest of the workspace files the entry names, as they were when approved. */
  readonly files?: string;
  readonly approved_at: string;
}

/** Whether a project entry may start, and if not, the sentence that says why. */
export type ApprovalCheck = { readonly approved: true } | { readonly approved: false; readonly why: string };

/** The sha256 (hex) of the canonical JSON of `entry` exactly as written, ignored keys included. */
export function entryHash(entry: McpServerEntry): string {
  return createHash("sha256").update(canonicalJson(entry)).digest("hex");
}

/**
 * The approvals in one state dir, as read at load; approve and revoke write through and update it.
 * Each method takes the workspace it concerns, by default the one given to load (else the cwd).
 */
export class McpApprovals {
  private constructor(
    readonly stateDir: string,
    /** The workspace's real path: approvals of one checkout do not carry over to another. */
    readonly workspace: string,
    private records: readonly McpApproval[],
    /** Why the file could not be read (it then counts as approving nothing), or undefined. */
    readonly problem: string | undefined,
  ) {}

  /** Reads `<stateDir>/mcp-approvals.json`; never throws for the file's content (a bad file approves nothing). */
  static async load(stateDir: string, workspace: string = process.cwd()): Promise<McpApprovals> {
    const read = await readApprovals(join(stateDir, MCP_APPROVALS_FILE));
    return new McpApprovals(resolve(stateDir), workspaceKey(workspace), read.records, read.problem);
  }

  /** True when this exact `entry` was approved under `name` in `workspace`, with the files it names as they are now. */
  isApproved(name: string, entry: McpServerEntry, workspace: string = this.workspace): boolean {
    return this.check(name, entry, workspace).approved;
  }

  /** Whether `entry` may start under `name` in `workspace`; when not, why: never approved, another entry approved, or its files changed since. */
  check(name: string, entry: McpServerEntry, workspace: string = this.workspace): ApprovalCheck {
    const key = workspaceKey(workspace);
    const record = this.records.find((item) => sameSlot(item, key, name));
    if (record === undefined || record.hash !== entryHash(entry)) return { approved: false, why: "that exact entry is not approved" };
    const files = filesDigest(entry, key);
    if (typeof files !== "string") return { approved: false, why: `its files cannot be bound to an approval: ${files.problem}` };
    if ((record.files ?? "") !== files) return { approved: false, why: "the workspace files it runs changed since it was approved (or it was approved before approvals bound them)" };
    return { approved: true };
  }

  /** The approvals of `workspace`, by name. */
  approvals(workspace: string = this.workspace): readonly McpApproval[] {
    const key = workspaceKey(workspace);
    return this.records.filter((record) => record.workspace === key).sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Records `entry` as approved under `name` in `workspace` (replacing an earlier approval of that
   * name), binding the workspace files it names; returns those files, relative to the workspace.
   * Throws AppError limit_exceeded when they cannot be bound, timeout when the lock is not had.
   */
  async approve(name: string, entry: McpServerEntry, workspace: string = this.workspace): Promise<readonly string[]> {
    const key = workspaceKey(workspace);
    const bound = isStdioEntry(entry) ? entryFiles(entry, key) : { digest: "", files: [] };
    if ("problem" in bound) throw new AppError("limit_exceeded", `${name} cannot be approved: ${bound.problem}`);
    const record: McpApproval = { workspace: key, name, hash: entryHash(entry), files: bound.digest, approved_at: new Date().toISOString() };
    await this.rewrite((records) => [...records.filter((item) => !sameSlot(item, key, name)), record]);
    return bound.files;
  }

  /** Removes the approval of `name` in `workspace`; returns whether there was one. */
  async revoke(name: string, workspace: string = this.workspace): Promise<boolean> {
    const key = workspaceKey(workspace);
    let found = false;
    await this.rewrite((records) => {
      found = records.some((item) => sameSlot(item, key, name));
      return records.filter((item) => !sameSlot(item, key, name));
    });
    return found;
  }

  /** Re-reads the file under the lock (another process may have written it), applies `change`, writes it back. */
  private async rewrite(change: (records: readonly McpApproval[]) => McpApproval[]): Promise<void> {
    const file = join(this.stateDir, MCP_APPROVALS_FILE);
    await withApprovalsLock(this.stateDir, async () => {
      const current = await readApprovals(file);
      const next = change(current.records);
      if (next.length > MAX_MCP_APPROVALS) throw new AppError("limit_exceeded", `${file} would hold ${next.length} approvals; at most ${MAX_MCP_APPROVALS} (MAX_MCP_APPROVALS)`);
      await writeFileAtomic(file, `${JSON.stringify({ version: FILE_VERSION, approvals: next }, null, 2)}\n`);
      this.records = next;
    });
  }
}

/** The digest of the workspace files `entry` names (none for a server over HTTP), or why they cannot be bound. */
function filesDigest(entry: McpServerEntry, workspace: string): string | { problem: string } {
  if (!isStdioEntry(entry)) return "";
  const files = entryFiles(entry, workspace);
  return "digest" in files ? files.digest : files;
}

function sameSlot(record: McpApproval, workspace: string, name: string): boolean {
  return record.workspace === workspace && record.name === name;
}

/** The key of a workspace: its real path when it exists (a symlinked checkout is the same one). */
function workspaceKey(workspace: string): string {
  try {
    return realpathSync(workspace);
  } catch {
    return resolve(workspace);
  }
}

interface ReadApprovals {
  readonly records: readonly McpApproval[];
  readonly problem: string | undefined;
}

async function readApprovals(file: string): Promise<ReadApprovals> {
  let read;
  try {
    read = await readFileBounded(file, MAX_MCP_APPROVALS_BYTES);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { records: [], problem: undefined };
    return { records: [], problem: `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"}); no project server counts as approved` };
  }
  if (read.kind === "not_regular_file") return { records: [], problem: `${file} is ${read.what}; no project server counts as approved` };
  if (read.kind === "oversize") return { records: [], problem: `${file} is over ${MAX_MCP_APPROVALS_BYTES} bytes (MAX_MCP_APPROVALS_BYTES); no project server counts as approved` };
  const records = parseApprovals(read.bytes.toString("utf8"));
  return records === undefined ? { records: [], problem: `${file} is not an approvals file; no project server counts as approved` } : { records, problem: undefined };
}

function parseApprovals(text: string): McpApproval[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const list = (value as { approvals?: unknown } | null)?.approvals;
  if (!Array.isArray(list)) return undefined;
  return list.filter(isApproval);
}

function isApproval(value: unknown): value is McpApproval {
  const record = value as Partial<McpApproval> | null;
  return typeof record === "object" && record !== null && typeof record.workspace === "string" && typeof record.name === "string" && typeof record.hash === "string"
    && (record.files === undefined || typeof record.files === "string");
}

/** Runs `fn` holding the approvals lock of `stateDir`; throws AppError timeout after MCP_APPROVALS_LOCK_TIMEOUT_MS. */
async function withApprovalsLock<T>(stateDir: string, fn: () => Promise<T>): Promise<T> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const lockPath = join(stateDir, MCP_APPROVALS_LOCK_FILE);
  const deadline = Date.now() + MCP_APPROVALS_LOCK_TIMEOUT_MS;
  let lock: FileLock | undefined;
  while ((lock = tryLockFile(lockPath)) === undefined) {
    if (Date.now() >= deadline) throw new AppError("timeout", `${lockPath} not acquired within ${MCP_APPROVALS_LOCK_TIMEOUT_MS} ms (MCP_APPROVALS_LOCK_TIMEOUT_MS)`);
    await sleep(MCP_APPROVALS_LOCK_RETRY_MS);
  }
  try {
    return await fn();
  } finally {
    lock.release();
  }
}
