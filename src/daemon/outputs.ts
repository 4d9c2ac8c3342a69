import { humanSize, jsonBytes } from "../json/index.js";
import { MAX_EXECUTE_OUTPUT_BYTES, MAX_EXECUTE_OUTPUTS } from "./limits.js";
import type { OutputResource } from "../api/index.js";

/** The answer's fields about outputs. */
export interface OutputsAnswer {
  readonly outputs: OutputResource[];
  readonly dropped_outputs: number;
  readonly dropped_output_bytes: number;
}

/**
 * The outputs an `execute` answer carries: kept in order while they stay within
 * MAX_EXECUTE_OUTPUTS and MAX_EXECUTE_OUTPUT_BYTES; from the first that does not fit on, none
 * is kept (all of them still went to the stream), only counted. So the daemon holds at most that
 * much per execution, whatever the kernel prints.
 */
export class KeptOutputs {
  private readonly items: OutputResource[] = [];
  private bytes = 0;
  private droppedCount = 0;
  private droppedBytes = 0;
  /** The bound the first dropped output passed, as the marker names it. */
  private passed = "";

  /** Keeps `item` if it fits, else counts its `payload` bytes (default: its content's JSON; see outputPayloadBytes) as dropped. */
  add(item: OutputResource, payload?: number): void {
    const size = jsonBytes(item.content);
    if (this.droppedCount === 0) {
      if (this.items.length >= MAX_EXECUTE_OUTPUTS) this.passed = `MAX_EXECUTE_OUTPUTS (${MAX_EXECUTE_OUTPUTS} outputs)`;
      else if (this.bytes + size > MAX_EXECUTE_OUTPUT_BYTES) this.passed = `MAX_EXECUTE_OUTPUT_BYTES (${humanSize(MAX_EXECUTE_OUTPUT_BYTES)})`;
      else {
        this.items.push(item);
        this.bytes += size;
        return;
      }
    }
    this.droppedCount += 1;
    this.droppedBytes += payload ?? size;
  }

  /**
   * `outputs` (ending with a stderr marker output when some were dropped), `dropped_outputs`, and
   * `dropped_output_bytes`: the bytes of the outputs left out plus `cutBytes`, what was cut from
   * outputs that passed the kernel's per-output bound.
   */
  answer(cutBytes: number): OutputsAnswer {
    const outputs = [...this.items];
    if (this.droppedCount > 0) {
      const text = `[albedo: ${humanSize(this.droppedBytes)} of output dropped: more than ${this.passed} in one execute answer; its ${this.droppedCount} later outputs went to the stream only]\n`;
      outputs.push({ msg_type: "stream", content: { name: "stderr", text } });
    }
    return { outputs, dropped_outputs: this.droppedCount, dropped_output_bytes: this.droppedBytes + cutBytes };
  }
}
