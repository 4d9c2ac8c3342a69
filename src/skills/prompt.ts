import { humanSize } from "../json/index.js";
import { visibleControls } from "../text/index.js";
import type { CatalogSnapshot } from "./types.js";

export { humanSize };

/** Escapes text for XML element content and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

/** A description folded onto one line (YAML block scalars may span several). */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** A value as the prompt shows it: control characters made visible (visibleControls), then XML-escaped. */
function shown(text: string): string {
  return escapeXml(visibleControls(text));
}

/**
 * The skill catalog block a model receives (O-4, S-8): one <skill> per snapshot entry with name,
 * one-line description, size, slash command and installed source, control characters made visible
 * and XML-escaped, so a skill cannot hide terminal escapes or markup in it. "" when there are no skills.
 * `commandOf` names a skill's slash command: the naming rule (C-2) belongs to the commands domain.
 */
export function renderSkillsPrompt(snapshot: CatalogSnapshot, commandOf: (skillName: string) => string): string {
  if (snapshot.skills.length === 0) return "";
  const lines = ["<available_skills>"];
  for (const skill of snapshot.skills) {
    lines.push(
      "<skill>",
      `<name>${shown(skill.name)}</name>`,
      `<description>${shown(oneLine(skill.description))}</description>`,
      `<size>${humanSize(skill.size)}</size>`,
      `<command>${shown(commandOf(skill.name))}</command>`,
      `<location>${shown(skill.source)}</location>`,
      "</skill>",
    );
  }
  lines.push("</available_skills>");
  return `${lines.join("\n")}\n`;
}

/**
 * The instruction files' text block (S-11): each file's text inside an <instructions> element whose
 * attributes (scope, path, truncated) are escaped. The text is kept as written but for its control
 * characters: line ends become "\n" and every other control but tab is made visible (visibleControls).
 * "" when there are none.
 */
export function renderInstructions(snapshot: CatalogSnapshot): string {
  if (snapshot.instructions.length === 0) return "";
  const blocks = snapshot.instructions.map((file) => {
    const truncated = file.truncated ? ' truncated="true"' : "";
    const lines = visibleControls(file.text.replace(/\r\n/g, "\n"), "\n\t");
    const text = lines.endsWith("\n") ? lines : `${lines}\n`;
    return `<instructions scope="${file.scope}" path="${shown(file.path)}"${truncated}>\n${text}</instructions>\n`;
  });
  return blocks.join("");
}
