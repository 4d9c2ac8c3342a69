import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AppError } from "../../src/errors/index.js";
import { prepareActivation } from "../../src/skills/activation.js";
import { discoverCatalog, findSkill, type SkillEntry } from "../../src/skills/index.js";
import { readResource } from "../../src/skills/read.js";
import { listResources } from "../../src/skills/resources.js";
import { layout, writeFile } from "./fixtures.js";
import { roots, skillText, writeSkill } from "../support/skills.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-skills-");
afterEach(() => temps.cleanup());

async function demoSkill(text?: string): Promise<{ entry: SkillEntry; dir: string; base: string }> {
  const base = temps.make("albedo-activation-");
  const dirs = layout(base);
  const dir = writeSkill(roots.wsAlbedo(dirs.workspace), "demo", text);
  const entry = findSkill(await discoverCatalog(dirs), "demo");
  if (entry === undefined) throw new Error("demo skill not discovered");
  return { entry, dir, base };
}

describe("C-5 activation payload", () => {
  it("returns name, description, installed source, the arguments and the full body", async () => {
    const body = "# Demo\n\nStep one.\n\nStep two uses `references/a.md`.";
    const { entry, dir } = await demoSkill(skillText("demo", { description: "Demonstrates activation.", frontmatter: "license: MIT\n", body: `\n${body}\n\n` }));
    const activation = await prepareActivation(entry, "some raw text");
    expect(activation).toEqual({
      name: "demo",
      description: "Demonstrates activation.",
      source: join(dir, "SKILL.md"),
      arguments: "some raw text",
      instructions: body,
    });
  });

  it("keeps named arguments as given, copied so later changes by the caller do not leak in", async () => {
    const { entry } = await demoSkill();
    const args: Record<string, string> = { target: "x y", mode: "" };
    const activation = await prepareActivation(entry, args);
    args.target = "changed";
    expect(activation.arguments).toEqual({ target: "x y", mode: "" });
  });

  it("reads the body at call time", async () => {
    const { entry, dir } = await demoSkill();
    expect((await prepareActivation(entry, "")).instructions).toBe("Do the demo thing.");
    writeFileSync(join(dir, "SKILL.md"), skillText("demo", { body: "Rewritten body.\n" }));
    expect((await prepareActivation(entry, "")).instructions).toBe("Rewritten body.");
  });

  it("refuses arguments that are neither text nor a mapping of strings", async () => {
    const { entry } = await demoSkill();
    for (const bad of [42, null, ["a"], { n: 1 }]) {
      const error = await prepareActivation(entry, bad as never).then(() => undefined, (e: unknown) => e);
      expect((error as AppError).code).toBe("invalid_params");
    }
  });
});

describe("R-5 never executes", () => {
  it("lists, reads and activates a skill whose scripts would leave a marker if run, and no marker appears", async () => {
    const { entry, dir, base } = await demoSkill(
      skillText("demo", { frontmatter: "allowed-tools: Bash(scripts/run.sh)\n", body: "Run `scripts/run.sh`, import `helper`, see https://example.invalid/x.\n" }),
    );
    const marker = join(base, "marker");
    const script = `#!/bin/sh\ntouch '${marker}'\n`;
    writeFile(join(dir, "scripts", "run.sh"), script);
    chmodSync(join(dir, "scripts", "run.sh"), 0o755);
    writeFile(join(dir, "scripts", "helper.py"), `open(${JSON.stringify(marker)}, "w").close()\n`);
    writeFile(join(dir, "scripts", "helper.mjs"), `import { writeFileSync } from "node:fs"; writeFileSync(${JSON.stringify(marker)}, "");\n`);
    writeFile(join(dir, "scripts", "__init__.py"), `open(${JSON.stringify(marker)}, "w").close()\n`);
    const before = readdirSync(base).sort();

    const listing = await listResources(entry);
    expect(listing.resources).toEqual(["SKILL.md", "scripts/__init__.py", "scripts/helper.mjs", "scripts/helper.py", "scripts/run.sh"]);
    for (const resource of listing.resources) await readResource(entry, resource);
    expect((await readResource(entry, "scripts/run.sh")).content).toBe(script);
    const activation = await prepareActivation(entry, "go");
    expect(activation.instructions).toContain("scripts/run.sh");

    expect(existsSync(marker)).toBe(false);
    expect(readdirSync(base).sort()).toEqual(before);
    // Control: the fixture is live, so the assertions above could have failed.
    execFileSync(join(dir, "scripts", "run.sh"));
    expect(existsSync(marker)).toBe(true);
  });
});
