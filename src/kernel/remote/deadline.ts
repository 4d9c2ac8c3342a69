import { deadlineError } from "../errors.js";

/** `promise`, or an AppError `timeout` naming `deadlineName` once `ms` pass first. The timer never outlives the race. */
export function withDeadline<T>(promise: Promise<T>, ms: number, what: string, deadlineName: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(deadlineError(what, deadlineName, ms)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
