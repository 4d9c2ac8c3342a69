import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { validateSkillPath } from "../../src/skills/check.js";
import { MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH } from "../../src/skills/limits.js";
import { validateSkillFields } from "../../src/skills/validate.js";
import { tempDirs } from "../support/tempDirs.js";

const temps = tempDirs("albedo-skills-");
afterEach(() => temps.cleanup());

/** One case ported from skills-ref's test suite: directory name, file content, expected verdict. */
interface RefCase {
  readonly test: string;
  readonly dir: string;
  /** SKILL.md content; undefined = no SKILL.md. */
  readonly content?: string;
  readonly file?: string;
  readonly valid: boolean;
  /** A code our validator must report (the counterpart of skills-ref's message check). */
  readonly code?: string;
}

const fm = (lines: string, body = "Body\n") => `---\n${lines}\n---\n${body}`;

const SKILLS_REF_CASES: readonly RefCase[] = [
  { test: "test_valid_skill", dir: "my-skill", content: fm("name: my-skill\ndescription: A test skill", "# My Skill\n"), valid: true },
  { test: "test_missing_skill_md", dir: "my-skill", valid: false, code: "missing_skill_md" },
  { test: "test_invalid_name_uppercase", dir: "MySkill", content: fm("name: MySkill\ndescription: A test skill"), valid: false, code: "name_not_lowercase" },
  { test: "test_name_too_long", dir: "a".repeat(70), content: fm(`name: ${"a".repeat(70)}\ndescription: A test skill`), valid: false, code: "name_too_long" },
  { test: "test_name_leading_hyphen", dir: "-my-skill", content: fm("name: -my-skill\ndescription: A test skill"), valid: false, code: "name_hyphen_edges" },
  { test: "test_name_consecutive_hyphens", dir: "my--skill", content: fm("name: my--skill\ndescription: A test skill"), valid: false, code: "name_consecutive_hyphens" },
  { test: "test_name_invalid_characters", dir: "my_skill", content: fm("name: my_skill\ndescription: A test skill"), valid: false, code: "name_invalid_characters" },
  { test: "test_name_directory_mismatch", dir: "wrong-name", content: fm("name: correct-name\ndescription: A test skill"), valid: false, code: "name_directory_mismatch" },
  { test: "test_unexpected_fields", dir: "my-skill", content: fm("name: my-skill\ndescription: A test skill\nunknown_field: should not be here"), valid: false, code: "unknown_field" },
  { test: "test_valid_with_all_fields", dir: "my-skill", content: fm("name: my-skill\ndescription: A test skill\nlicense: MIT\nmetadata:\n  author: Test"), valid: true },
  { test: "test_allowed_tools_accepted", dir: "my-skill", content: fm("name: my-skill\ndescription: A test skill\nallowed-tools: Bash(jq:*) Bash(git:*)"), valid: true },
  { test: "test_allowed_tools_inline_list_accepted", dir: "my-skill", content: fm("name: my-skill\ndescription: A test skill\nallowed-tools: [Read, Write, Edit, Bash]"), valid: true },
  { test: "test_allowed_tools_block_list_accepted", dir: "my-skill", content: fm("name: my-skill\ndescription: A test skill\nallowed-tools:\n  - Read\n  - Bash\n  - Grep"), valid: true },
  { test: "test_i18n_chinese_name", dir: "技能", content: fm("name: 技能\ndescription: A skill with Chinese name"), valid: true },
  { test: "test_i18n_russian_name_with_hyphens", dir: "мой-навык", content: fm("name: мой-навык\ndescription: A skill with Russian name"), valid: true },
  { test: "test_i18n_russian_lowercase_valid", dir: "навык", content: fm("name: навык\ndescription: A skill with Russian lowercase name"), valid: true },
  { test: "test_i18n_russian_uppercase_rejected", dir: "НАВЫК", content: fm("name: НАВЫК\ndescription: A skill with Russian uppercase name"), valid: false, code: "name_not_lowercase" },
  { test: "test_description_too_long", dir: "my-skill", content: fm(`name: my-skill\ndescription: ${"x".repeat(1100)}`), valid: false, code: "description_too_long" },
  { test: "test_valid_compatibility", dir: "my-skill", content: fm("name: my-skill\ndescription: A test skill\ncompatibility: Requires Python 3.11+"), valid: true },
  { test: "test_compatibility_too_long", dir: "my-skill", content: fm(`name: my-skill\ndescription: A test skill\ncompatibility: ${"x".repeat(550)}`), valid: false, code: "compatibility_too_long" },
  { test: "test_nfkc_normalization", dir: "café", content: fm("name: cafe\u0301\ndescription: A test skill"), valid: true },
  // test_parser.py cases, judged through the validator.
  { test: "test_missing_frontmatter", dir: "my-skill", content: "# No frontmatter here", valid: false, code: "frontmatter_missing" },
  { test: "test_unclosed_frontmatter", dir: "my-skill", content: "---\nname: my-skill\ndescription: A test skill\n", valid: false, code: "frontmatter_unterminated" },
  { test: "test_invalid_yaml", dir: "my-skill", content: "---\nname: [invalid\ndescription: broken\n---\nBody here\n", valid: false, code: "yaml_error" },
  { test: "test_non_dict_frontmatter", dir: "my-skill", content: "---\n- just\n- a\n- list\n---\nBody\n", valid: false, code: "frontmatter_not_mapping" },
  { test: "test_read_with_metadata", dir: "my-skill", content: fm("name: my-skill\ndescription: A test skill\nmetadata:\n  author: Test Author\n  version: 1.0"), valid: true },
  { test: "test_missing_name", dir: "my-skill", content: fm("description: A test skill"), valid: false, code: "missing_name" },
  { test: "test_missing_description", dir: "my-skill", content: fm("name: my-skill"), valid: false, code: "missing_description" },
  { test: "test_read_properties_with_lowercase_skill_md", dir: "my-skill", file: "skill.md", content: fm("name: my-skill\ndescription: A test skill", "# My Skill\n"), valid: true },
];

describe("S-4 strict validation matches skills-ref verdicts", () => {
  for (const c of SKILLS_REF_CASES) {
    it(`${c.test}: ${c.valid ? "valid" : `invalid (${c.code})`}`, async () => {
      const dir = join(temps.make(), c.dir);
      mkdirSync(dir);
      if (c.content !== undefined) writeFileSync(join(dir, c.file ?? "SKILL.md"), c.content);
      const result = await validateSkillPath(dir, { strict: true });
      expect(result.valid).toBe(c.valid);
      if (c.code !== undefined) expect(result.errors.map((e) => e.code)).toContain(c.code);
      else expect(result.errors).toEqual([]);
    });
  }

  it("test_nonexistent_path: invalid (path_missing)", async () => {
    const result = await validateSkillPath(join(temps.make(), "nonexistent"), { strict: true });
    expect(result).toMatchObject({ valid: false, errors: [{ code: "path_missing" }] });
  });

  it("test_not_a_directory: a plain file that is not SKILL.md is invalid (not_skill_path)", async () => {
    const file = join(temps.make(), "file.txt");
    writeFileSync(file, "test");
    expect(await validateSkillPath(file, { strict: true })).toMatchObject({ valid: false, errors: [{ code: "not_skill_path" }] });
  });

  it("test_find_skill_md_prefers_uppercase: SKILL.md wins over skill.md", async () => {
    const dir = join(temps.make(), "my-skill");
    mkdirSync(dir);
    writeFileSync(join(dir, "SKILL.md"), fm("name: my-skill\ndescription: upper"));
    writeFileSync(join(dir, "skill.md"), "lowercase, no frontmatter");
    expect((await validateSkillPath(dir, { strict: true })).valid).toBe(true);
  });
});

describe("S-4 validation beyond skills-ref", () => {
  it("accepts a SKILL.md path and checks its parent directory's name", async () => {
    const dir = join(temps.make(), "demo");
    mkdirSync(dir);
    writeFileSync(join(dir, "SKILL.md"), fm("name: demo\ndescription: d"));
    expect((await validateSkillPath(join(dir, "SKILL.md"), { strict: false })).valid).toBe(true);
  });

  it("checks a linked skill directory against the link's own name (Nix-store style)", async () => {
    const base = temps.make();
    const store = join(base, "store", "abc123-demo-1.0");
    mkdirSync(store, { recursive: true });
    writeFileSync(join(store, "SKILL.md"), fm("name: demo\ndescription: d"));
    symlinkSync(store, join(base, "demo"));
    expect((await validateSkillPath(join(base, "demo"), { strict: true })).valid).toBe(true);
    expect((await validateSkillPath(store, { strict: true })).errors.map((e) => e.code)).toEqual(["name_directory_mismatch"]);
  });

  it("a directory without SKILL.md or skill.md is invalid", async () => {
    const dir = join(temps.make(), "empty");
    mkdirSync(dir);
    expect((await validateSkillPath(dir, { strict: false })).errors.map((e) => e.code)).toEqual(["missing_skill_md"]);
  });

  it("unknown fields are warnings without --strict and errors with it", () => {
    const fields = { name: "demo", description: "d", "x-other-agent": "v", another: "w" };
    const loose = validateSkillFields(fields, "demo", { strict: false });
    expect(loose.errors).toEqual([]);
    expect(loose.warnings.map((w) => w.code)).toEqual(["unknown_field", "unknown_field"]);
    const strict = validateSkillFields(fields, "demo", { strict: true });
    expect(strict.errors.map((e) => e.code)).toEqual(["unknown_field", "unknown_field"]);
    expect(strict.warnings).toEqual([]);
  });

  it("reports every problem of one file", () => {
    const result = validateSkillFields(
      { name: "-Bad--name_", description: "", compatibility: { a: "b" }, metadata: ["x"], "allowed-tools": { a: "b" }, license: ["MIT"] },
      "other",
      { strict: false },
    );
    expect(result.errors.map((e) => e.code).sort()).toEqual(
      [
        "empty_description",
        "invalid_allowed_tools",
        "invalid_compatibility",
        "invalid_license",
        "invalid_metadata",
        "name_consecutive_hyphens",
        "name_directory_mismatch",
        "name_hyphen_edges",
        "name_invalid_characters",
        "name_not_lowercase",
      ].sort(),
    );
  });

  it("name length is counted in code points, bounded at MAX_NAME_LENGTH", () => {
    const edge = "技".repeat(MAX_NAME_LENGTH);
    expect(validateSkillFields({ name: edge, description: "d" }, edge, { strict: true }).errors).toEqual([]);
    const over = `${edge}a`;
    expect(validateSkillFields({ name: over, description: "d" }, over, { strict: true }).errors.map((e) => e.code)).toEqual(["name_too_long"]);
  });

  it("description is bounded at MAX_DESCRIPTION_LENGTH and trimmed", () => {
    const at = validateSkillFields({ name: "d", description: "x".repeat(MAX_DESCRIPTION_LENGTH) }, "d", { strict: true });
    expect(at.errors).toEqual([]);
    const over = validateSkillFields({ name: "d", description: "x".repeat(MAX_DESCRIPTION_LENGTH + 1) }, "d", { strict: true });
    expect(over.errors.map((e) => e.code)).toEqual(["description_too_long"]);
    expect(validateSkillFields({ name: "d", description: "  spaced \n" }, "d", { strict: true }).description).toBe("spaced");
  });

  it("names are NFKC-normalised before every rule (ligature ﬁ becomes fi)", () => {
    const result = validateSkillFields({ name: "\uFB01le-tools", description: "d" }, "file-tools", { strict: true });
    expect(result.errors).toEqual([]);
    expect(result.name).toBe("file-tools");
  });

  it("empty, missing and non-string required fields get distinct codes", () => {
    const codes = (fields: Record<string, unknown>) => validateSkillFields(fields, "x", { strict: true }).errors.map((e) => e.code);
    expect(codes({ name: "  ", description: "d" })).toEqual(["empty_name"]);
    expect(codes({ name: { a: "b" }, description: "d" })).toEqual(["invalid_name"]);
    expect(codes({ name: "x", description: ["d"] })).toEqual(["invalid_description"]);
    expect(codes({})).toEqual(["missing_name", "missing_description"]);
  });

  it("keeps optional fields, joining an allowed-tools list with spaces", () => {
    const result = validateSkillFields(
      { name: "x", description: "d", license: "MIT", compatibility: "py3", metadata: { a: "1" }, "allowed-tools": ["Read", "Bash(git:*)"] },
      "x",
      { strict: true },
    );
    expect(result.optional).toEqual({ license: "MIT", compatibility: "py3", metadata: { a: "1" }, allowedTools: "Read Bash(git:*)" });
  });
});
