import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { discoverCatalog } from "../../src/skills/snapshot.js";
import { loadPrompts, systemPrompt } from "../../src/turns/context.js";
import { layout, writeFile } from "../skills/fixtures.js";
import { roots, writeSkill } from "../support/skills.js";
import { tempDirs } from "../support/tempDirs.js";
import { installDir } from "../../src/platform/index.js";

const temps = tempDirs("albedo-skills-");
afterEach(() => temps.cleanup());
const prompts = loadPrompts(installDir());

describe("O-3 O-4 message[0]", () => {
  it("holds the manual, the skills how-to for the mode, the instruction files and the catalog block", async () => {
    const t = layout(temps.make());
    writeSkill(roots.wsAlbedo(t.workspace), "pdf-processing");
    writeFile(join(t.workspace, "AGENTS.md"), "Always run the tests.\n");
    const snapshot = await discoverCatalog(t);
    const code = systemPrompt(snapshot, "code", prompts);
    expect(code.startsWith(prompts.manual)).toBe(true);
    expect(code).toContain(prompts.skills.code);
    expect(code).not.toContain(prompts.skills.tool);
    expect(code).toContain("Always run the tests.");
    expect(code).toMatch(/<available_skills>[\s\S]*<name>pdf-processing<\/name>[\s\S]*<\/available_skills>\n$/);
    expect(code.indexOf("Always run the tests.")).toBeLessThan(code.indexOf("<available_skills>\n<skill>"));
    expect(systemPrompt(snapshot, "tool", prompts)).toContain(prompts.skills.tool);
  });

  it("says which skills the model may use on its own", () => {
    for (const mode of ["code", "tool"] as const) expect(prompts.skills[mode]).toMatch(/skills you may use on your own are the ones listed in\s+`<available_skills>`/);
  });

  it("with no skill enabled: no catalog block and not a word about skills", async () => {
    const t = layout(temps.make());
    writeFile(join(t.workspace, "AGENTS.md"), "Be brief.\n");
    const text = systemPrompt(await discoverCatalog({ ...t, install: temps.make() }), "tool", prompts);
    // The instruction file's path may hold anything (a temp dir name); the words around it may not mention skills.
    expect(text.replace(/ path="[^"]*"/g, "")).not.toMatch(/skill/i);
    expect(text).toContain("Be brief.");
  });

  it("is byte-identical for the same snapshot and mode", async () => {
    const t = layout(temps.make());
    writeSkill(roots.wsAlbedo(t.workspace), "demo");
    const first = systemPrompt(await discoverCatalog(t), "code", prompts);
    expect(systemPrompt(await discoverCatalog(t), "code", prompts)).toBe(first);
  });
});
