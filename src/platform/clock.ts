/** The one wall clock for timelines that span processes. */
import { performance } from "node:perf_hooks";

/** Milliseconds since the epoch with sub-millisecond precision: the clock Python's time.time() and Jupyter header dates read. */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}
