/**
 * Transcript rows (O-9): what a person sees of a conversation, stored with the receipts and
 * streamed as they happen. snake_case, because they go to HTTP and to `albedo chat --json` as is.
 */
import type { ImageRef } from "../images/index.js";
import { humanSize } from "../json/index.js";
import type { TranscriptEntry } from "../operations/index.js";
import type { McpCallRecord } from "../session/index.js";

/** How a skill reached the conversation (O-6). */
export type PullVia = "tool" | "python" | "user";

export type TranscriptRow =
  | { readonly kind: "user"; readonly text: string }
  | { readonly kind: "assistant"; readonly text: string }
  | { readonly kind: "code"; readonly code: string }
  | {
      readonly kind: "output"; readonly text: string; readonly status: "ok" | "error"; readonly truncated: boolean;
      /** The cell's images kept for people (I-3), in output order; absent when it showed none. */
      readonly images?: readonly ImageRef[];
    }
  | { readonly kind: "skill"; readonly skill: string; readonly bytes: number; readonly via: PullVia; readonly already_loaded: boolean; readonly text: string }
  | {
      readonly kind: "mcp"; readonly server: string; readonly tool: string; readonly via: McpCallRecord["via"];
      readonly ms: number; readonly bytes: number; readonly is_error: boolean; readonly text: string;
    }
  | {
      /** One host a python step reached, per decision (N-4): "used network pypi.org · 3 connections · 12.1 MB". */
      readonly kind: "network"; readonly host: string; readonly decision: "allowed" | "denied" | "failed";
      readonly connections: number; readonly bytes: number;
      /** The setting that allowed it (allowed), else null. */
      readonly rule: string | null;
      /** Why it was refused or failed, else null. */
      readonly reason: string | null;
      readonly text: string;
    }
  | { readonly kind: "notice"; readonly text: string }
  | { readonly kind: "error"; readonly text: string };

export type RowKind = TranscriptRow["kind"];
export const ROW_KINDS: readonly RowKind[] = ["user", "assistant", "code", "output", "skill", "mcp", "network", "notice", "error"];

/**
 * A stored row: the row with its turn, its place in the session's transcript and when it was
 * written. The one shape a row has from the store's append to the stream and GET transcript.
 */
export type StoredRow = TranscriptEntry<TranscriptRow>;

/** The row every activation draws (O-6): "used skill NAME · SIZE", SIZE as the catalog block prints it. */
export function skillRow(skill: string, bytes: number, via: PullVia, alreadyLoaded: boolean): TranscriptRow {
  return { kind: "skill", skill, bytes, via, already_loaded: alreadyLoaded, text: `used skill ${skill} · ${humanSize(bytes)}` };
}

/** The row every MCP call draws (M-5): "used SERVER.TOOL · SIZE", SIZE being the result's. */
export function mcpRow(record: McpCallRecord): TranscriptRow {
  const { server, tool, via, ms, bytes, is_error } = record;
  return { kind: "mcp", server, tool, via, ms, bytes, is_error, text: `used ${record.server}.${record.tool} · ${humanSize(record.bytes)}${record.is_error ? " (failed)" : ""}` };
}
