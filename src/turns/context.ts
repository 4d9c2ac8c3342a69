/**
 * message[0] of every model request (O-3, O-4): the manual, the skills how-to and catalog block
 * when skills are enabled, and the instruction files. Built only from the session's snapshot and
 * the mode, so it stays byte-identical between turns until a setting changes or the catalog is
 * reloaded, and earlier requests stay cache-friendly for the provider.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { skillCommandName } from "../commands/index.js";
import { renderInstructions, renderSkillsPrompt, type CatalogSnapshot } from "../skills/index.js";
import { renderMcpServers, type McpContextServer } from "./mcpContext.js";

/** How the model reaches skills: by writing Python (`commands.x()`) or through the `skill` tool. */
export type ToolMode = "code" | "tool";

/** The prompt files shipped in `<install>/priv/prompts`. */
export const PROMPT_FILES = { manual: "system.md", code: "skills-code.md", tool: "skills-tool.md", mcp: "mcp.md", mcpTool: "mcp-tool.md" } as const;

/** The manual, the two skills sections and the MCP section (with its tool-mode paragraph), read once per install directory. */
export interface Prompts {
  readonly manual: string;
  readonly skills: Readonly<Record<ToolMode, string>>;
  readonly mcp: { readonly code: string; readonly tool: string };
}

const loaded = new Map<string, Prompts>();

/** The prompt files of `install`, read on first use; throws when one is missing (a broken install). */
export function loadPrompts(install: string): Prompts {
  let prompts = loaded.get(install);
  if (prompts === undefined) {
    const read = (name: string) => readFileSync(join(install, "priv", "prompts", name), "utf8").trim();
    const mcp = read(PROMPT_FILES.mcp);
    prompts = {
      manual: read(PROMPT_FILES.manual),
      skills: { code: read(PROMPT_FILES.code), tool: read(PROMPT_FILES.tool) },
      mcp: { code: mcp, tool: `${mcp}\n\n${read(PROMPT_FILES.mcpTool)}` },
    };
    loaded.set(install, prompts);
  }
  return prompts;
}

/**
 * The system message for `snapshot` in `mode`. With no skill enabled there is no skills section and
 * no catalog block at all (absent, not empty); instruction files follow the manual either way.
 * `mcp` is the running MCP servers of a session that configures any, undefined for one that
 * configures none: then no word about MCP appears (M-4).
 */
export function systemPrompt(snapshot: CatalogSnapshot, mode: ToolMode, prompts: Prompts, mcp?: readonly McpContextServer[]): string {
  // A snapshot is immutable: its message[0] is built once per mode (and MCP block) and kept with it.
  const byMode = built.get(snapshot) ?? new Map<string, string>();
  built.set(snapshot, byMode);
  const block = mcp === undefined ? undefined : renderMcpServers(mcp);
  const key = `${mode}\0${prompts.manual.length}\0${block ?? ""}`;
  let text = byMode.get(key);
  if (text === undefined) {
    text = buildSystemPrompt(snapshot, mode, prompts, block);
    // The block changes only when a server starts, stops or changes its tools: few keys per snapshot.
    if (byMode.size >= MAX_PROMPTS_PER_SNAPSHOT) byMode.clear();
    byMode.set(key, text);
  }
  return text;
}

/** Message[0] texts kept per snapshot (modes times MCP blocks seen). */
const MAX_PROMPTS_PER_SNAPSHOT = 8;

const built = new WeakMap<CatalogSnapshot, Map<string, string>>();

function buildSystemPrompt(snapshot: CatalogSnapshot, mode: ToolMode, prompts: Prompts, mcpBlock: string | undefined): string {
  const parts = [prompts.manual];
  if (snapshot.skills.length > 0) parts.push(prompts.skills[mode]);
  if (mcpBlock !== undefined) parts.push(prompts.mcp[mode]);
  const instructions = renderInstructions(snapshot);
  if (instructions !== "") parts.push(`# Standing instructions\n\n${instructions.trimEnd()}`);
  if (snapshot.skills.length > 0) parts.push(renderSkillsPrompt(snapshot, skillCommandName).trimEnd());
  if (mcpBlock !== undefined) parts.push(mcpBlock.trimEnd());
  return `${parts.join("\n\n")}\n`;
}
