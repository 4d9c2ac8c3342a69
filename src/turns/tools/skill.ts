/**
 * The `skill` tool (O-5): the model loads one enabled skill by name. Its enum is the enabled skills,
 * so it exists only when one is; a second load returns a short note instead of the text (O-6).
 */
import { z } from "zod";
import { escapeXml, findSkill, type Activation, type ResourceListing, type SkillEntry } from "../../skills/index.js";
import { visibleControls } from "../../text/index.js";
import { alreadyLoadedNote } from "../pulls.js";
import type { Tool } from "./tool.js";

/** The tool for a catalog whose enabled skills are `names` (at least one). */
export function skillTool(names: readonly [string, ...string[]]) {
  const schema = z
    .object({
      name: z.enum(names).describe("the skill to load, one of <available_skills>"),
      arguments: z.string().optional().describe("what you are about to do with it (optional)"),
    })
    .strict();
  const tool: Tool<z.infer<typeof schema>> = {
    name: "skill",
    description:
      "Load a skill: returns its instructions inside <skill name=… dir=…> and the files it bundles. " +
      "Paths in the instructions are relative to dir; read them with the read tool.",
    schema,
    async run({ name, arguments: text }, context) {
      const entry = findSkill(context.host.view.snapshot, name);
      if (entry === undefined) return `Skill ${name} is no longer in this session's catalog (it was reloaded); pick one from <available_skills>.`;
      if (context.ledger.has(name)) {
        context.ledger.pull(entry, "tool", "");
        return alreadyLoadedNote(name);
      }
      const wrapped = skillText(entry, await context.host.skills.activate(name, text ?? ""), await context.host.skills.resources(name));
      context.ledger.pull(entry, "tool", wrapped);
      return wrapped;
    },
  };
  return tool;
}

/** A loaded skill as a model reads it (O-5): its instructions inside <skill name=… dir=…>, then the files it bundles. */
export function skillText(entry: SkillEntry, activation: Activation, listing: ResourceListing): string {
  const files = listing.resources.filter((path) => path !== "SKILL.md");
  const body = visibleControls(activation.instructions, "\n\t");
  const resources = files.length === 0 ? "" : `\n\nresources:\n${files.map((path) => `- ${path}`).join("\n")}`;
  return `<skill name="${escapeXml(entry.name)}" dir="${escapeXml(entry.dir)}">${body}${resources}</skill>`;
}
