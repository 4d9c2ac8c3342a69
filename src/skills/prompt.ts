import { humanSize } from "../json/index.js";
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

/**
 * The skill catalog block a model receives (O-4, S-8): one <skill> per snapshot entry with name,
 * one-line description, size, slash command and installed source, XML-escaped. "" when there are no skills.
 */
export function renderSkillsPrompt(snapshot: CatalogSnapshot): string {
  if (snapshot.skills.length === 0) return "";
  const lines = ["<available_skills>"];
  for (const skill of snapshot.skills) {
    lines.push(
      "<skill>",
      `<name>${escapeXml(skill.name)}</name>`,
      `<description>${escapeXml(oneLine(skill.description))}</description>`,
      `<size>${humanSize(skill.size)}</size>`,
      `<command>${escapeXml(skill.command)}</command>`,
      `<location>${escapeXml(skill.source)}</location>`,
      "</skill>",
    );
  }
  lines.push("</available_skills>");
  return `${lines.join("\n")}\n`;
}

/**
 * The instruction files' text block (S-11): each file's text verbatim inside an <instructions> element
 * whose attributes (scope, path, truncated) are escaped. "" when there are none.
 */
export function renderInstructions(snapshot: CatalogSnapshot): string {
  if (snapshot.instructions.length === 0) return "";
  const blocks = snapshot.instructions.map((file) => {
    const truncated = file.truncated ? ' truncated="true"' : "";
    const text = file.text.endsWith("\n") ? file.text : `${file.text}\n`;
    return `<instructions scope="${file.scope}" path="${escapeXml(file.path)}"${truncated}>\n${text}</instructions>\n`;
  });
  return blocks.join("");
}
