/**
 * A tools/call through the Tasks extension (M-6): the call goes out with the extension declared;
 * a `resultType: "task"` answer is followed with `tasks/get` (at the server's poll interval,
 * clamped to named bounds) until the task is terminal, its status messages handed to `onStatus`;
 * the caller's signal (an interrupted cell) sends `tasks/cancel` (or, before a task exists,
 * `notifications/cancelled`); the whole call is bounded by the caller's deadline.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { MAX_MCP_TASK_POLL_MS, MAX_MCP_TASK_POLLS, MCP_TASK_CANCEL_TIMEOUT_MS, MIN_MCP_TASK_POLL_MS } from "./limits.js";
import { RawRequestAborted, RawRpcError, type RawChannel } from "./rawChannel.js";

/** How a task call ended without a tool result. */
export class McpTaskError extends Error {
  override readonly name = "McpTaskError";
  constructor(message: string, readonly kind: "timeout" | "cancelled" | "failed" | "protocol") {
    super(message);
  }
}

export interface TaskCallOptions {
  /** The cell's signal: aborting it cancels the call or its task. */
  readonly signal: AbortSignal;
  /** The call's deadline in ms (`call_timeout_ms`), from the first request to the task's end. */
  readonly timeoutMs: number;
  /** Told each status message of a running task (`statusMessage`, or the status). */
  readonly onStatus?: (text: string) => void;
}

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** Calls `tool` with `args` on `channel`; answers the CallToolResult (its own, or the completed task's). */
export async function callWithTasks(channel: RawChannel, tool: string, args: Record<string, unknown>, options: TaskCallOptions): Promise<Record<string, unknown>> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = AbortSignal.any([options.signal, deadline]);
  let first: Record<string, unknown>;
  try {
    first = await channel.request(
      "tools/call", { name: tool, arguments: args }, signal,
      (id) => void channel.notify("notifications/cancelled", { requestId: id, reason: "the call was interrupted" }),
      // A task the server made before it heard the interrupt is cancelled when its answer comes.
      (late) => void (late.resultType === "task" && typeof late.taskId === "string" && cancel(channel, late.taskId)),
    );
  } catch (error) {
    throw ended(error, deadline, options.timeoutMs);
  }
  const kind = first.resultType;
  if (kind === undefined || kind === "complete") return withoutResultType(first);
  if (kind !== "task") throw new McpTaskError(`the server answered with a result of type ${JSON.stringify(String(kind)).slice(0, 80)}, which albedo does not take`, "protocol");
  return follow(channel, first, signal, deadline, options);
}

async function follow(channel: RawChannel, task: Record<string, unknown>, signal: AbortSignal, deadline: AbortSignal, options: TaskCallOptions): Promise<Record<string, unknown>> {
  const taskId = task.taskId;
  if (typeof taskId !== "string" || taskId.length === 0) throw new McpTaskError("the server answered with a task that has no taskId", "protocol");
  let current = task;
  let lastStatus = "";
  try {
    for (let polls = 0; ; polls++) {
      const status = String(current.status);
      const text = typeof current.statusMessage === "string" ? current.statusMessage : status;
      if (text !== lastStatus) {
        lastStatus = text;
        options.onStatus?.(text);
      }
      if (TERMINAL.has(status)) return outcome(current, status);
      if (status === "input_required") throw new McpTaskError("the task asks for input (elicitation), which albedo does not give; it was cancelled", "failed");
      if (polls >= MAX_MCP_TASK_POLLS) throw new McpTaskError(`the task was still ${status} after ${MAX_MCP_TASK_POLLS} polls (MAX_MCP_TASK_POLLS)`, "timeout");
      await sleep(pollInterval(current.pollIntervalMs), undefined, { signal });
      current = await channel.request("tasks/get", { taskId }, signal);
    }
  } catch (error) {
    // However the task ends on our side, the server is told to stop its work.
    if (!(error instanceof McpTaskError && error.kind === "protocol")) await cancel(channel, taskId);
    throw ended(error, deadline, options.timeoutMs);
  }
}

function outcome(task: Record<string, unknown>, status: string): Record<string, unknown> {
  if (status === "completed") {
    const result = task.result;
    if (typeof result !== "object" || result === null || Array.isArray(result)) throw new McpTaskError("the completed task carries no result object", "protocol");
    return withoutResultType(result as Record<string, unknown>);
  }
  if (status === "cancelled") throw new McpTaskError(`the server cancelled the task${typeof task.statusMessage === "string" ? `: ${task.statusMessage}` : ""}`, "failed");
  const error = task.error as { message?: unknown } | undefined;
  throw new McpTaskError(`the task failed: ${typeof error?.message === "string" ? error.message : typeof task.statusMessage === "string" ? task.statusMessage : "no reason given"}`, "failed");
}

/** `tasks/cancel`, waited for at most MCP_TASK_CANCEL_TIMEOUT_MS; its failure changes nothing. */
async function cancel(channel: RawChannel, taskId: string): Promise<void> {
  await channel.request("tasks/cancel", { taskId }, AbortSignal.timeout(MCP_TASK_CANCEL_TIMEOUT_MS)).catch(() => undefined);
}

function pollInterval(asked: unknown): number {
  const ms = typeof asked === "number" && Number.isFinite(asked) ? asked : MIN_MCP_TASK_POLL_MS;
  return Math.min(MAX_MCP_TASK_POLL_MS, Math.max(MIN_MCP_TASK_POLL_MS, ms));
}

function withoutResultType(result: Record<string, unknown>): Record<string, unknown> {
  const { resultType: _kind, ...rest } = result;
  return rest;
}

/** An error of the call's course as the caller should see it: the deadline, the cell's interrupt, the server's error answer. */
function ended(error: unknown, deadline: AbortSignal, timeoutMs: number): Error {
  if (error instanceof McpTaskError) return error;
  if (deadline.aborted) return new McpTaskError(`did not finish within ${timeoutMs} ms (call_timeout_ms)`, "timeout");
  if (error instanceof RawRequestAborted && error.closed) return error;
  if (error instanceof RawRequestAborted || (error as { name?: unknown }).name === "AbortError") return new McpTaskError("the call was cancelled", "cancelled");
  if (error instanceof RawRpcError) return error;
  return error instanceof Error ? error : new Error(String(error));
}
