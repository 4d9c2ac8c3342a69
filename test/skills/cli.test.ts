import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../src/cli/command.js";
import { runCli } from "../../src/cli/main.js";
import { discoverCatalog } from "../../src/skills/snapshot.js";
import { renderSkillsPrompt } from "../../src/skills/prompt.js";
import { layout, roots, skillText, TempDirs, writeFile, writeSkill } from "./fixtures.js";
import { skillCommandName } from "../../src/commands/index.js";

const temps = new TempDirs();
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
  writeSkill(roots.wsAlbedo(t.workspace), "demo", skillText("demo", "Shows things.", "x-extra: 1\n"));
  writeSkill(roots.homeAgents(t.home), "helper", skillText("helper", "Helps."));
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
      { name: "demo", description: "Shows things.", source: join(roots.wsAlbedo(t.workspace), "demo", "SKILL.md"), command: "/demo", scope: "workspace" },
      { name: "helper", description: "Helps.", source: join(roots.homeAgents(t.home), "helper", "SKILL.md"), command: "/helper", scope: "user" },
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
    expect(stdout).toMatch(/^NAME\s+SCOPE\s+COMMAND\s+DESCRIPTION\n/);
    expect(stdout).toMatch(/demo\s+workspace\s+\/demo\s+Shows things\./);
    expect(stdout).toContain("diagnostics:\n  error frontmatter_missing");
    expect(stdout).toMatch(/revision [0-9a-f]{64}\n$/);
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
