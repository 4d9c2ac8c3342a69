/** What every tool of the turn loop is: a spec the model sees, a schema its arguments must meet, and what it does. */
import { z } from "zod";
import type { ResultImages, ToolSpec } from "../../model/index.js";
import type { McpCallObserver, SessionPort } from "../../session/index.js";
import type { ConversationImage } from "../conversation.js";
import type { PullLedger } from "../pulls.js";
import type { TranscriptRow } from "../rows.js";
import type { Disposable } from "../../platform/index.js";

/** One allowed tool of a running MCP server, as tool mode offers it. */
export interface McpTurnTool {
  readonly server: string;
  readonly tool: string;
  readonly description: string;
  /** The tool's input JSON Schema as the server sent it (the runtime validates calls against it). */
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/** A call's answer as the turn shows it to the model. */
export interface McpTurnAnswer {
  readonly value: unknown;
  readonly images: readonly { readonly mime: string }[];
  readonly is_error: boolean;
  readonly error_text?: string;
}

/** The running servers and their allowed tools, at one moment. */
export type McpTurnServers = readonly { readonly name: string; readonly tools: readonly McpTurnTool[] }[];

/** The session's MCP servers as a turn reaches them (M-4, M-5). */
export interface TurnMcp {
  /** The running servers and their allowed tools, at this moment. */
  servers(): McpTurnServers;
  /** Calls `server.tool` for a function tool; observers hear of it as `via: "tool"`. Throws the hub's coded errors. */
  call(qualified: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpTurnAnswer>;
  /** Sees every call (the kernel's and the turn's own) until disposed. */
  observe(observer: McpCallObserver): Disposable;
}

/**
 * What the turn loop needs from its session: a view of the session's port. The kernel, the skills
 * and the catalog always; its images (without them, output rows carry no images), its usage (the
 * session's total for `/status`), its MCP servers (no block, no words, no tools), its kernel's
 * restores (the model learns which names came back) and its network (no `network` rows without
 * it) when it has them.
 */
export type TurnHost = Pick<SessionPort, "workspace" | "stateDir" | "view" | "kernel" | "skills"> & Partial<Pick<SessionPort, "images" | "usage" | "mcp" | "restores" | "network">>;

/** What a tool may use while it runs. */
export interface ToolContext {
  readonly host: TurnHost;
  readonly ledger: PullLedger;
  readonly emit: (row: TranscriptRow) => void;
  /** Aborted when the turn is interrupted. */
  readonly signal: AbortSignal;
}

/** A result with images (the `python` tool's): the text for the model, and the images that go with it (I-2). */
export interface ToolAnswer {
  readonly text: string;
  readonly images: ResultImages<ConversationImage>;
  /** The base64 of the images kept by reference, by id, for the turn's next request. */
  readonly bytes?: ReadonlyMap<string, string>;
}

export interface Tool<Args = unknown> {
  readonly name: string;
  readonly description: string;
  readonly schema: z.ZodType<Args>;
  /** The JSON Schema the model sees, when it is not the schema's own (an MCP tool's, checked by the runtime). */
  readonly parameters?: Readonly<Record<string, unknown>>;
  /** Runs the tool; returns the text sent back to the model (and any images that follow it). Throws only for an interrupt or a dead kernel. */
  run(args: Args, context: ToolContext): Promise<string | ToolAnswer>;
}

/** The spec the model sees: the schema as JSON Schema, without the dialect marker providers do not want. */
export function toolSpec(tool: Tool): ToolSpec {
  if (tool.parameters !== undefined) return { name: tool.name, description: tool.description, parameters: { ...tool.parameters } };
  const { $schema: _dialect, ...parameters } = z.toJSONSchema(tool.schema) as Record<string, unknown>;
  return { name: tool.name, description: tool.description, parameters };
}
