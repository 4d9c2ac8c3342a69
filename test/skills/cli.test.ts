import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../src/cli/plumbing/command.js";
import { runCli } from "../../src/cli/main.js";
import { discoverCatalog } from "../../src/skills/snapshot.js";
import { renderSkillsPrompt } from "../../src/skills/prompt.js";
import { layout, writeFile } from "./fixtures.js";
import { roots, writeSkill } from "../support/skills.js";
import { tempDirs } from "../support/tempDirs.js";
import { skillCommandName } from "../../src/commands/index.js";

const temps = tempDirs("albedo-skills-");
afterEach(() => temps.cleanup());

class Capture extends Writable {
  text = "";
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString("utf8");
    done();
  }
}

async function run(argv: string[], cwd: string, home: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new Capture();
  const stderr = new Capture();
  const io: CliIO = { stdout, stderr, stdin: new PassThrough(), env: { HOME: home }, cwd };
  const code = await runCli(argv, io);
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** Names of the non-builtin skills in a `skills list --json` answer. */
function local(skills: { name: string; scope: string }[]): string[] {
  return skills.filter((s) => s.scope !== "builtin").map((s) => s.name);
}

function tree() {
  const t = layout(temps.make());
  writeSkill(roots.wsAlbedo(t.workspace), "demo", { description: "Shows things.", frontmatter: "x-extra: 1\n" });
  writeSkill(roots.homeAgents(t.home), "helper", { description: "Helps." });
  writeSkill(roots.wsAlbedo(t.workspace), "broken", "no frontmatter");
  return t;
}

describe("X albedo skills list", () => {
  it("--json has exactly revision, skills and diagnostics in the documented shape", async () => {
    const t = tree();
    const { code, stdout } = await run(["skills", "list", "--json"], t.workspace, t.home);
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(Object.keys(out)).toEqual(["revision", "skills", "diagnostics"]);
    expect(out.revision).toMatch(/^[0-9a-f]{64}$/);
    // The real install's builtins are listed too; only this tree's skills are compared.
    expect(out.skills.filter((s: { scope: string }) => s.scope !== "builtin")).toEqual([
      { name: "demo", description: "Shows things.", source: join(roots.wsAlbedo(t.workspace), "demo", "SKILL.md"), command: "/demo", scope: "workspace", enabled: true, decided_by: "default" },
      { name: "helper", description: "Helps.", source: join(roots.homeAgents(t.home), "helper", "SKILL.md"), command: "/helper", scope: "user", enabled: true, decided_by: "default" },
    ]);
    expect(out.diagnostics.map((d: Record<string, string>) => [Object.keys(d).join(","), d.severity, d.code])).toEqual([
      ["severity,code,path,message", "error", "frontmatter_missing"],
      ["severity,code,path,message", "warning", "unknown_field"],
    ]);
  });

  it("prints a readable table with diagnostics and the revision", async () => {
    const t = tree();
    const { code, stdout } = await run(["skills", "list"], t.workspace, t.home);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^NAME\s+SCOPE\s+ENABLED, BY\s+DESCRIPTION\n/);
    expect(stdout).toMatch(/demo\s+workspace\s+on, default\s+Shows things\./);
    expect(stdout).toContain("diagnostics:\n  error frontmatter_missing  .albedo/skills/broken/SKILL.md\n    SKILL.md must start");
    expect(stdout).toMatch(/revision [0-9a-f]{12}\n$/);
    for (const line of stdout.split("\n")) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  it("resolves a relative --workspace against the cwd; a missing one is a usage error", async () => {
    const t = tree();
    const rel = await run(["skills", "list", "--json", "--workspace", "ws"], join(t.workspace, ".."), t.home);
    expect(local(JSON.parse(rel.stdout).skills)).toEqual(["demo", "helper"]);
    const missing = await run(["skills", "list", "--workspace", "nope"], t.workspace, t.home);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("not a directory");
  });
});

describe("X albedo skills validate", () => {
  it("exit 0 and the JSON shape for a valid skill; warnings kept", async () => {
    const t = tree();
    const { code, stdout } = await run(["skills", "validate", join(roots.wsAlbedo(t.workspace), "demo"), "--json"], t.workspace, t.home);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ valid: true, errors: [], warnings: [{ code: "unknown_field", message: expect.any(String) }] });
  });

  it("--strict turns unknown fields into errors and exits 1", async () => {
    const t = tree();
    const { code, stdout } = await run(["skills", "validate", ".albedo/skills/demo/SKILL.md", "--strict", "--json"], t.workspace, t.home);
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({ valid: false, errors: [{ code: "unknown_field" }], warnings: [] });
  });

  it("missing path, a plain non-SKILL.md file and a directory without SKILL.md are invalid", async () => {
    const t = tree();
    writeFile(join(t.workspace, "notes.txt"), "hi");
    mkdirSync(join(t.workspace, "empty"));
    for (const [path, expected] of [["nope", "path_missing"], ["notes.txt", "not_skill_path"], ["empty", "missing_skill_md"]] as const) {
      const { code, stdout } = await run(["skills", "validate", path, "--json"], t.workspace, t.home);
      expect(code).toBe(1);
      expect(JSON.parse(stdout).errors[0].code).toBe(expected);
    }
  });

  it("without --json prints the verdict and each problem", async () => {
    const t = tree();
    const { code, stdout } = await run(["skills", "validate", join(roots.wsAlbedo(t.workspace), "broken")], t.workspace, t.home);
    expect(code).toBe(1);
    expect(stdout).toContain(": invalid\n  error frontmatter_missing:");
  });

  it("no PATH is a usage error", async () => {
    const t = tree();
    expect((await run(["skills", "validate"], t.workspace, t.home)).code).toBe(2);
  });
});

describe("X albedo skills prompt", () => {
  it("prints exactly renderSkillsPrompt's text", async () => {
    const t = tree();
    const { code, stdout } = await run(["skills", "prompt", "--workspace", t.workspace], "/", t.home);
    expect(code).toBe(0);
    const expected = renderSkillsPrompt(await discoverCatalog({ workspace: t.workspace, home: t.home }), skillCommandName);
    expect(expected).toContain("<name>demo</name>");
    expect(stdout).toBe(expected);
  });

  it("--instructions puts the instruction block before the catalog block", async () => {
    const t = layout(temps.make());
    writeFileSync(join(t.workspace, "AGENTS.md"), "Orders.\n");
    const withInstructions = await run(["skills", "prompt", "--instructions"], t.workspace, t.home);
    const catalog = renderSkillsPrompt(await discoverCatalog({ workspace: t.workspace, home: t.home }), skillCommandName);
    expect(withInstructions.stdout).toBe(`<instructions scope="workspace" path="${join(t.workspace, "AGENTS.md")}">\nOrders.\n</instructions>\n${catalog}`);
    expect((await run(["skills", "prompt"], t.workspace, t.home)).stdout).toBe(catalog);
  });
});

describe("X bin/albedo as a process", () => {
  const repo = join(import.meta.dirname, "..", "..");
  it("skills list --json and skills validate exit codes", () => {
    const t = tree();
    const env = { ...process.env, HOME: t.home };
    const list = spawnSync("node", [join(repo, "bin", "albedo"), "skills", "list", "--json"], { cwd: t.workspace, env, encoding: "utf8" });
    expect(list.status).toBe(0);
    expect(local(JSON.parse(list.stdout).skills)).toEqual(["demo", "helper"]);
    const bad = spawnSync("node", [join(repo, "bin", "albedo"), "skills", "validate", join(roots.wsAlbedo(t.workspace), "broken")], { cwd: t.workspace, env, encoding: "utf8" });
    expect(bad.status).toBe(1);
    const help = spawnSync("node", [join(repo, "bin", "albedo"), "skills", "validate", "--help"], { env, encoding: "utf8" });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("--strict");
  });
});

/** Writes a settings file as the daemon would leave it (these commands only read it). */
function writeSettings(file: string, value: unknown): void {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, JSON.stringify(value));
}

describe("X D-4 albedo skills list and prompt apply the settings", () => {
  it("shows each skill on or off with the scope that decided; prompt leaves out what is off", async () => {
    const t = tree();
    writeSettings(join(t.home, ".albedo", "settings.json"), { skills: { off: ["helper", "demo"] } });
    writeSettings(join(t.workspace, ".albedo", "settings.json"), { skills: { on: ["demo"] } });
    const listed = await run(["skills", "list"], t.workspace, t.home);
    expect(listed.stdout).toMatch(/demo\s+workspace\s+on, project\s/);
    expect(listed.stdout).toMatch(/helper\s+user\s+off, global\s/);
    const json = JSON.parse((await run(["skills", "list", "--json"], t.workspace, t.home)).stdout);
    expect(json.skills.find((s: { name: string }) => s.name === "helper")).toMatchObject({ enabled: false, decided_by: "global" });
    const prompt = await run(["skills", "prompt"], t.workspace, t.home);
    expect(prompt.stdout).toContain("<name>demo</name>");
    expect(prompt.stdout).not.toContain("<name>helper</name>");
  });

  it("a malformed settings file fails the command instead of being read as empty", async () => {
    const t = tree();
    writeFileSync(join(t.workspace, ".albedo", "settings.json"), "{ not json");
    const listed = await run(["skills", "prompt"], t.workspace, t.home).catch((error: Error) => ({ code: -1, stdout: "", stderr: error.message }));
    expect(listed.code).not.toBe(0);
  });
});

describe("X albedo skills list --strict", () => {
  it("exits 1 when any skill is invalid or carries unknown fields, 0 on a clean tree", async () => {
    const t = tree();
    const dirty = await run(["skills", "list", "--strict"], t.workspace, t.home);
    expect(dirty.code).toBe(1);
    expect(dirty.stderr).toContain("2 problems make skills invalid");
    const clean = layout(temps.make());
    writeSkill(roots.wsAlbedo(clean.workspace), "fine", { description: "Fine." });
    expect((await run(["skills", "list", "--strict", "--json"], clean.workspace, clean.home)).code).toBe(0);
  });
});

describe("X S-3 S-4 albedo skills validate explains YAML and name errors", () => {
  it("takes several paths, reports each, and exits 1 when any is invalid", async () => {
    const t = tree();
    const text = await run(["skills", "validate", ".albedo/skills/demo", ".albedo/skills/broken"], t.workspace, t.home);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(".albedo/skills/demo: valid\n");
    expect(text.stdout).toContain(".albedo/skills/broken: invalid\n");
    expect(text.stdout).toContain("1 of 2 valid\n");
    const json = JSON.parse((await run(["skills", "validate", "--json", ".albedo/skills/demo", ".albedo/skills/broken"], t.workspace, t.home)).stdout);
    expect(json).toMatchObject({ valid: false, results: [{ path: join(roots.wsAlbedo(t.workspace), "demo"), valid: true }, { valid: false }] });
    expect((await run(["skills", "validate", ".albedo/skills/demo"], t.workspace, t.home)).code).toBe(0);
  });

  it("an unquoted `: ` names the SKILL.md line, quotes it and says how to quote it", async () => {
    const t = layout(temps.make());
    writeSkill(roots.wsAlbedo(t.workspace), "colon", "---\nname: colon\ndescription: Use this: for things\n---\nBody.\n");
    const { code, stdout } = await run(["skills", "validate", ".albedo/skills/colon"], t.workspace, t.home);
    expect(code).toBe(1);
    expect(stdout).toContain("error yaml_error: invalid YAML on line 3: ");
    expect(stdout).toContain(": description: Use this: for things\n");
    expect(stdout).toContain('    fix: a value containing ": " must be quoted: description: "Use this: for things"\n');
    const json = JSON.parse((await run(["skills", "validate", "--json", ".albedo/skills/colon"], t.workspace, t.home)).stdout);
    expect(json.errors[0]).toMatchObject({ code: "yaml_error", line: 3, fix: 'a value containing ": " must be quoted: description: "Use this: for things"' });
    const listed = await run(["skills", "list"], t.workspace, t.home);
    expect(listed.stdout).toContain("fix: a value containing");
  });

  it("a repeated field and a value starting with a reserved character get their own fixes", async () => {
    const t = layout(temps.make());
    writeSkill(roots.wsAlbedo(t.workspace), "twice", "---\nname: twice\nname: twice\ndescription: d\n---\n");
    writeSkill(roots.wsAlbedo(t.workspace), "star", "---\nname: star\ndescription: *bold* claims\n---\n");
    const twice = JSON.parse((await run(["skills", "validate", "--json", ".albedo/skills/twice"], t.workspace, t.home)).stdout);
    expect(twice.errors[0]).toMatchObject({ line: 3, fix: "each field may appear once; keep one of them" });
    const star = JSON.parse((await run(["skills", "validate", "--json", ".albedo/skills/star"], t.workspace, t.home)).stdout);
    expect(star.errors[0]).toMatchObject({ line: 3, fix: 'a value starting with "*" must be quoted: description: "*bold* claims"' });
  });

  it("a name breaking the rules gets the valid name to use; a mismatch says both ways out", async () => {
    const t = layout(temps.make());
    writeSkill(roots.wsAlbedo(t.workspace), "PDF_Tools", "---\nname: PDF_Tools\ndescription: d\n---\n");
    writeSkill(roots.wsAlbedo(t.workspace), "pdf", "---\nname: pdf-tools\ndescription: d\n---\n");
    const bad = JSON.parse((await run(["skills", "validate", "--json", ".albedo/skills/PDF_Tools"], t.workspace, t.home)).stdout);
    expect(bad.errors[0]).toMatchObject({ code: "name_not_lowercase", fix: "use name: pdf-tools" });
    const mismatch = JSON.parse((await run(["skills", "validate", "--json", ".albedo/skills/pdf"], t.workspace, t.home)).stdout);
    expect(mismatch.errors).toEqual([expect.objectContaining({ code: "name_directory_mismatch", fix: 'rename the directory to "pdf-tools", or set name: pdf' })]);
    // A directory name that breaks the rules is never offered as the name to set.
    writeSkill(roots.wsAlbedo(t.workspace), "Wrong_Name", "---\nname: right-name\ndescription: d\n---\n");
    const invalidDir = JSON.parse((await run(["skills", "validate", "--json", ".albedo/skills/Wrong_Name"], t.workspace, t.home)).stdout);
    expect(invalidDir.errors).toEqual([expect.objectContaining({ code: "name_directory_mismatch", fix: 'rename the directory to "right-name"' })]);
  });
});
