/**
 * The API the session, kernel and model-loop layers build on (M-2, M-5): its shapes pinned as
 * types, and the call bounds at their edges (a call's deadline becomes the kernel's own RPC
 * deadline; a result must fit in one RPC reply).
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  DEFAULT_MCP_CALL_TIMEOUT_MS, DEFAULT_MCP_STARTUP_TIMEOUT_MS, MAX_MCP_CALL_TIMEOUT_MS, MCP_MAX_RESULT_BYTES, McpHub,
  type McpCallOptions, type McpCallResult, type McpClientInfo, type McpDiagnostic, type McpHttpEntry, type McpImage, type McpLink, type McpProgress,
  type McpServerStatus, type McpStdioEntry, type McpToolDetail, type McpToolInfo, type McpToolsChanged, type ResolvedServer,
} from "../../src/mcp/index.js";
import { RPC_MAX_MESSAGE_BYTES } from "../../src/rpc/index.js";
import { validateSettings } from "../../src/settings/index.js";
import { tempDirs } from "../support/tempDirs.js";
import { resolved } from "./support.js";

const temps = tempDirs("alb-mcp-api-");

describe("M-5 the bounds of a call", () => {
  it("call_timeout_ms is at most MAX_MCP_CALL_TIMEOUT_MS, 10 minutes", () => {
    expect(MAX_MCP_CALL_TIMEOUT_MS).toBe(600_000);
    const entry = (ms: number) => ({ mcp: { servers: { s: { command: "x", call_timeout_ms: ms } } } });
    expect(validateSettings(entry(MAX_MCP_CALL_TIMEOUT_MS), "global").ok).toBe(true);
    expect(validateSettings(entry(MAX_MCP_CALL_TIMEOUT_MS + 1), "global")).toMatchObject({ ok: false, problems: [{ path: "mcp.servers.s.call_timeout_ms" }] });
  });

  it("a result of MCP_MAX_RESULT_BYTES leaves room for the envelope of one RPC reply", () => {
    expect(MCP_MAX_RESULT_BYTES).toBeLessThanOrEqual(RPC_MAX_MESSAGE_BYTES - 128 * 1024);
  });

  it("an entry without deadlines gets the named defaults", async () => {
    const [server] = (await resolved(temps, { s: { command: "node" } })).servers;
    expect(server).toMatchObject({ callTimeoutMs: DEFAULT_MCP_CALL_TIMEOUT_MS, startupTimeoutMs: DEFAULT_MCP_STARTUP_TIMEOUT_MS });
    expect(DEFAULT_MCP_CALL_TIMEOUT_MS).toBeLessThanOrEqual(MAX_MCP_CALL_TIMEOUT_MS);
    temps.cleanup();
  });
});

describe("M-2 the shapes other layers use", () => {
  it("pins the hub's results and options", () => {
    expectTypeOf<McpCallResult>().toEqualTypeOf<{
      readonly value: unknown; readonly images: readonly McpImage[]; readonly links: readonly McpLink[]; readonly is_error: boolean; readonly error_text?: string; readonly bytes: number; readonly ms: number;
    }>();
    expectTypeOf<McpLink>().toEqualTypeOf<{ readonly server: string; readonly uri: string; readonly name?: string; readonly description?: string; readonly mime?: string }>();
    expectTypeOf<McpServerStatus["era"]>().toEqualTypeOf<"modern" | "legacy" | undefined>();
    expectTypeOf<McpImage>().toEqualTypeOf<{ readonly mime: string; readonly data: string }>();
    expectTypeOf<McpServerStatus["status"]>().toEqualTypeOf<"starting" | "running" | "failed" | "stopped" | "disabled">();
    expectTypeOf<McpServerStatus>().toHaveProperty("diagnostics").toEqualTypeOf<readonly string[]>();
    expectTypeOf<McpToolInfo>().toEqualTypeOf<{ readonly name: string; readonly server: string; readonly tool: string; readonly description: string }>();
    expectTypeOf<McpToolDetail>().toHaveProperty("input_schema").toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<McpToolsChanged>().toEqualTypeOf<{ readonly server: string }>();
    expectTypeOf<McpCallOptions>().toEqualTypeOf<{ readonly signal: AbortSignal; readonly via?: string; readonly onProgress?: (progress: McpProgress) => void; readonly onStatus?: (text: string) => void }>();
    expectTypeOf<McpProgress>().toEqualTypeOf<{ readonly progress: number; readonly total?: number; readonly message?: string }>();
    expectTypeOf<McpClientInfo>().toEqualTypeOf<{ readonly name: string; readonly version: string }>();
    expectTypeOf<McpDiagnostic>().toEqualTypeOf<{ readonly server?: string; readonly message: string }>();
    expectTypeOf<ResolvedServer["origin"]>().toEqualTypeOf<"global" | "project">();
    expectTypeOf<McpStdioEntry>().toHaveProperty("command").toEqualTypeOf<string>();
    expectTypeOf<McpHttpEntry>().toHaveProperty("url").toEqualTypeOf<string>();
    expectTypeOf<McpHub["call"]>().returns.toEqualTypeOf<Promise<McpCallResult>>();
  });
});
