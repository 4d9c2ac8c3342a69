/** Skill fixtures written into temp dirs by every suite: one SKILL.md shape, one writer. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** What a test may set in the SKILL.md `skillText` makes; the rest keeps its default. */
export interface SkillParts {
  /** The `description:` value; default `The <name> skill.` */
  readonly description?: string;
  /** More frontmatter YAML lines after `description` (a missing final newline is added). */
  readonly frontmatter?: string;
  /** Everything after the closing `---`, written as is; default `Do the <name> thing.` and a newline. */
  readonly body?: string;
}

/** A SKILL.md text: frontmatter with `name`, `description` and `parts.frontmatter`, then the body. */
export function skillText(name: string, parts: SkillParts = {}): string {
  const extra = parts.frontmatter ?? "";
  const lines = extra === "" || extra.endsWith("\n") ? extra : `${extra}\n`;
  return `---\nname: ${name}\ndescription: ${parts.description ?? `The ${name} skill.`}\n${lines}---\n${parts.body ?? `Do the ${name} thing.\n`}`;
}

/**
 * Writes `<root>/<name>/SKILL.md` (parents created) and returns the skill directory. `content` is
 * the parts of `skillText(name, …)`, or the whole file (a string or bytes, for malformed ones).
 */
export function writeSkill(root: string, name: string, content: SkillParts | string | Buffer = {}): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), typeof content === "string" || Buffer.isBuffer(content) ? content : skillText(name, content));
  return dir;
}

/** The skill roots of a workspace, a home and an install. */
export const roots = {
  wsAlbedo: (ws: string) => join(ws, ".albedo", "skills"),
  wsAgents: (ws: string) => join(ws, ".agents", "skills"),
  homeAlbedo: (home: string) => join(home, ".albedo", "skills"),
  homeAgents: (home: string) => join(home, ".agents", "skills"),
  builtin: (install: string) => join(install, "priv", "skills"),
};
