import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** Temp directories made by one test file; `cleanup` removes them all. */
export class TempDirs {
  private readonly made: string[] = [];

  make(prefix = "albedo-skills-"): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    this.made.push(dir);
    return dir;
  }

  cleanup(): void {
    for (const dir of this.made.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

/** A SKILL.md text with the given frontmatter lines and body. */
export function skillText(name: string, description = `Does ${name} things.`, extra = "", body = `# ${name}\n\nSteps.\n`): string {
  return `---\nname: ${name}\ndescription: ${description}\n${extra}---\n${body}`;
}

/** Writes `<root>/<dirName>/SKILL.md` (parents created) and returns the skill directory. */
export function writeSkill(root: string, dirName: string, text: string | Buffer = skillText(dirName)): string {
  const dir = join(root, dirName);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), text);
  return dir;
}

/** Writes a file, creating its parent directories. */
export function writeFile(path: string, content: string | Buffer): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

/** The five S-1 roots for a layout of workspace/home/install under one temp base. */
export function layout(base: string): { workspace: string; home: string; install: string } {
  const workspace = join(base, "ws");
  const home = join(base, "home");
  const install = join(base, "install");
  for (const dir of [workspace, home, install]) mkdirSync(dir, { recursive: true });
  return { workspace, home, install };
}

export const roots = {
  wsAlbedo: (ws: string) => join(ws, ".albedo", "skills"),
  wsAgents: (ws: string) => join(ws, ".agents", "skills"),
  homeAlbedo: (home: string) => join(home, ".albedo", "skills"),
  homeAgents: (home: string) => join(home, ".agents", "skills"),
  builtin: (install: string) => join(install, "priv", "skills"),
};
