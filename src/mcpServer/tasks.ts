/**
 * Long cells as tasks (P-5): the Tasks extension (`io.modelcontextprotocol/tasks`) of the
 * 2026-07-28 era. A `python` call from a client that declares the extension and whose cell outlives
 * PYTHON_TASK_AFTER_MS is answered with a task; `tasks/get` answers its status, and its result once
 * the cell ended; `tasks/cancel` interrupts the cell. At most MAX_MCP_TASKS are kept; a finished
 * task is forgotten TASK_TTL_MS after it ended.
 */
import { randomBytes } from "node:crypto";
import { MAX_MCP_TASKS, TASK_POLL_INTERVAL_MS, TASK_TTL_MS } from "./limits.js";

/** The Tasks extension's identifier, in capabilities and in a request's client capabilities. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

type TaskStatus = "working" | "completed" | "failed" | "cancelled";

/** A task as `tasks/get` (and the call that made it) answers it. */
export interface TaskView {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly statusMessage: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly code: number; readonly message: string };
}

interface Task {
  view: TaskView;
  readonly owner: string;
  readonly stop: AbortController;
  expires?: NodeJS.Timeout;
}

/** A task id that names no task (or one of another owner): the request's params are wrong. */
export class UnknownTask extends Error {
  override readonly name = "UnknownTask";
}

/** The tasks of one endpoint (a stdio process, or the daemon's `/mcp`), each bound to the owner that made it. */
export class TaskStore {
  private readonly tasks = new Map<string, Task>();

  /** Whether a new task fits (MAX_MCP_TASKS, after forgetting the oldest finished one). */
  hasRoom(): boolean {
    if (this.tasks.size < MAX_MCP_TASKS) return true;
    for (const [id, task] of this.tasks) {
      if (task.view.status !== "working") {
        clearTimeout(task.expires);
        this.tasks.delete(id);
        return true;
      }
    }
    return false;
  }

  /** A task for `work`, a running call whose `stop` interrupts it; `owner` alone may read or cancel it. */
  start(work: Promise<Record<string, unknown>>, stop: AbortController, owner: string, statusMessage: string): TaskView {
    const now = new Date().toISOString();
    const task: Task = {
      owner,
      stop,
      view: { taskId: randomBytes(16).toString("hex"), status: "working", statusMessage, createdAt: now, lastUpdatedAt: now, ttlMs: TASK_TTL_MS, pollIntervalMs: TASK_POLL_INTERVAL_MS },
    };
    this.tasks.set(task.view.taskId, task);
    work.then(
      (result) => this.finish(task, stop.signal.aborted ? "cancelled" : "completed", stop.signal.aborted ? "cancelled: the cell was interrupted" : "the cell ended", result),
      (error: unknown) => this.finish(task, "failed", "the call failed", undefined, error instanceof Error ? error.message : String(error)),
    );
    return task.view;
  }

  /** The task `taskId` of `owner`; throws UnknownTask. */
  get(taskId: string, owner: string): TaskView {
    return this.find(taskId, owner).view;
  }

  /** Interrupts the task's cell; answers the task as it is now (it turns `cancelled` once the cell stopped). */
  cancel(taskId: string, owner: string): TaskView {
    const task = this.find(taskId, owner);
    if (task.view.status === "working") {
      task.stop.abort("tasks/cancel");
      task.view = { ...task.view, statusMessage: "cancelling: the cell is being interrupted", lastUpdatedAt: new Date().toISOString() };
    }
    return task.view;
  }

  /** Interrupts every running task and forgets them all (the endpoint's end). */
  close(): void {
    for (const task of this.tasks.values()) {
      clearTimeout(task.expires);
      if (task.view.status === "working") task.stop.abort("the server is closing");
    }
    this.tasks.clear();
  }

  private find(taskId: string, owner: string): Task {
    const task = this.tasks.get(taskId);
    if (task === undefined || task.owner !== owner) throw new UnknownTask(`no task "${taskId.slice(0, 80)}" here (finished more than ${TASK_TTL_MS / 1000} s ago, or never made by this server)`);
    return task;
  }

  private finish(task: Task, status: TaskStatus, statusMessage: string, result?: Record<string, unknown>, error?: string): void {
    if (!this.tasks.has(task.view.taskId)) return;
    task.view = {
      ...task.view,
      status,
      statusMessage,
      lastUpdatedAt: new Date().toISOString(),
      ...(result === undefined ? {} : { result }),
      ...(error === undefined ? {} : { error: { code: -32603, message: error } }),
    };
    task.expires = setTimeout(() => this.tasks.delete(task.view.taskId), TASK_TTL_MS);
    task.expires.unref();
  }
}
