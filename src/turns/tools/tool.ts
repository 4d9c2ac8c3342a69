/** What every tool of the turn loop is: a spec the model sees, a schema its arguments must meet, and what it does. */
import { z } from "zod";
import type { ExecuteFuture } from "../../kernel/index.js";
import type { ToolSpec } from "../../model/index.js";
import type { Activation, ResourceListing } from "../../skills/index.js";
import type { ActivationObserver, SessionView } from "../../session/index.js";
import type { PullLedger } from "../pulls.js";
import type { TranscriptRow } from "../rows.js";
import type { Disposable } from "../../platform/index.js";

/** What the turn loop needs from its session. The session implements it; tests may fake it. */
export interface TurnHost {
  readonly workspace: string;
  /** The runtime's state dir: never read by a tool, even when the workspace contains it (the home). */
  readonly stateDir: string;
  /** The session's current view: its snapshot and commands. */
  readonly view: SessionView;
  execute(code: string): ExecuteFuture;
  interrupt(): Promise<void>;
  /** A skill's activation through the session's guarded skill access (C-5). */
  activate(skill: string, text: string): Promise<Activation>;
  /** A skill's resource listing through the same access. */
  resources(skill: string): Promise<ResourceListing>;
  /** Sees activations the kernel makes over RPC until disposed. */
  observeActivations(observer: ActivationObserver): Disposable;
}

/** What a tool may use while it runs. */
export interface ToolContext {
  readonly host: TurnHost;
  readonly ledger: PullLedger;
  readonly emit: (row: TranscriptRow) => void;
  /** Aborted when the turn is interrupted. */
  readonly signal: AbortSignal;
}

export interface Tool<Args = unknown> {
  readonly name: string;
  readonly description: string;
  readonly schema: z.ZodType<Args>;
  /** Runs the tool; returns the text sent back to the model. Throws only for an interrupt or a dead kernel. */
  run(args: Args, context: ToolContext): Promise<string>;
}

/** The spec the model sees: the schema as JSON Schema, without the dialect marker providers do not want. */
export function toolSpec(tool: Tool): ToolSpec {
  const { $schema: _dialect, ...parameters } = z.toJSONSchema(tool.schema) as Record<string, unknown>;
  return { name: tool.name, description: tool.description, parameters };
}
