import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseSkillDocument, validateSkillPath } from "../../src/skills/index.js";
import { installDir } from "../../src/platform/index.js";

const BUILTINS = ["complexity-review", "customize-albedo", "design-preflight", "orchestrating-agents", "research", "running-experiments"];
/** A body shorter than this is a placeholder, not instructions a model can follow. */
const MIN_BODY_LINES = 60;

const root = join(installDir(), "priv", "skills");

describe("S-10 built-in skills", () => {
  it("ships exactly the six named skills as directories", () => {
    expect(readdirSync(root).sort()).toEqual(BUILTINS);
  });

  it.each(BUILTINS)("%s is valid under --strict and substantive", async (name) => {
    const verdict = await validateSkillPath(join(root, name), { strict: true });
    expect(verdict).toEqual({ valid: true, errors: [], warnings: [] });
    const document = parseSkillDocument(readFileSync(join(root, name, "SKILL.md"), "utf8"));
    expect(document.body.split("\n").length).toBeGreaterThanOrEqual(MIN_BODY_LINES);
  });

  it.each(BUILTINS)("%s refers only to reference files it ships", (name) => {
    const body = readFileSync(join(root, name, "SKILL.md"), "utf8");
    const referenced = [...body.matchAll(/references\/[\w.-]+\.md/g)].map((match) => match[0]);
    for (const path of new Set(referenced)) expect(existsSync(join(root, name, path)), `${name}/${path}`).toBe(true);
  });
});
