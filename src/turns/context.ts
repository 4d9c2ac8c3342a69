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

/** How the model reaches skills: by writing Python (`commands.x()`) or through the `skill` tool. */
export type ToolMode = "code" | "tool";

/** The prompt files shipped in `<install>/priv/prompts`. */
export const PROMPT_FILES = { manual: "system.md", code: "skills-code.md", tool: "skills-tool.md" } as const;

/** The manual and the two skills sections, read once per install directory. */
export interface Prompts {
  readonly manual: string;
  readonly skills: Readonly<Record<ToolMode, string>>;
}

const loaded = new Map<string, Prompts>();

/** The prompt files of `install`, read on first use; throws when one is missing (a broken install). */
export function loadPrompts(install: string): Prompts {
  let prompts = loaded.get(install);
  if (prompts === undefined) {
    const read = (name: string) => readFileSync(join(install, "priv", "prompts", name), "utf8").trim();
    prompts = { manual: read(PROMPT_FILES.manual), skills: { code: read(PROMPT_FILES.code), tool: read(PROMPT_FILES.tool) } };
    loaded.set(install, prompts);
  }
  return prompts;
}

/**
 * The system message for `snapshot` in `mode`. With no skill enabled there is no skills section and
 * no catalog block at all (absent, not empty); instruction files follow the manual either way.
 */
export function systemPrompt(snapshot: CatalogSnapshot, mode: ToolMode, prompts: Prompts): string {
  // A snapshot is immutable: its message[0] is built once per mode and kept with it.
  const byMode = built.get(snapshot) ?? new Map<string, string>();
  built.set(snapshot, byMode);
  const key = `${mode}\0${prompts.manual.length}`;
  let text = byMode.get(key);
  if (text === undefined) {
    text = buildSystemPrompt(snapshot, mode, prompts);
    byMode.set(key, text);
  }
  return text;
}

const built = new WeakMap<CatalogSnapshot, Map<string, string>>();

function buildSystemPrompt(snapshot: CatalogSnapshot, mode: ToolMode, prompts: Prompts): string {
  const parts = [prompts.manual];
  if (snapshot.skills.length > 0) parts.push(prompts.skills[mode]);
  const instructions = renderInstructions(snapshot);
  if (instructions !== "") parts.push(`# Standing instructions\n\n${instructions.trimEnd()}`);
  if (snapshot.skills.length > 0) parts.push(renderSkillsPrompt(snapshot, skillCommandName).trimEnd());
  return `${parts.join("\n\n")}\n`;
}
