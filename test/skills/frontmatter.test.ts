import { describe, expect, it } from "vitest";
import { decodeUtf8 } from "../../src/json/index.js";
import { parseSkillDocument } from "../../src/skills/frontmatter.js";
import { MAX_FRONTMATTER_BYTES, MAX_FRONTMATTER_MEMO_ENTRIES } from "../../src/skills/limits.js";

const codes = (text: string) => parseSkillDocument(text).problems.map((p) => p.code);

describe("S-3 frontmatter", () => {
  it("splits frontmatter from the trimmed body", () => {
    const parsed = parseSkillDocument("---\nname: demo\ndescription: Shows things.\n---\n\n# Demo\n\nBody text.\n\n");
    expect(parsed.problems).toEqual([]);
    expect(parsed.fields).toEqual({ name: "demo", description: "Shows things." });
    expect(parsed.body).toBe("# Demo\n\nBody text.");
  });

  it("tolerates a UTF-8 BOM and CRLF line ends", () => {
    const parsed = parseSkillDocument("\uFEFF---\r\nname: demo\r\ndescription: CRLF file\r\n---\r\nBody\r\n");
    expect(parsed.problems).toEqual([]);
    expect(parsed.fields).toEqual({ name: "demo", description: "CRLF file" });
    expect(parsed.body).toBe("Body");
  });

  it("reads every scalar as a string (failsafe schema)", () => {
    const parsed = parseSkillDocument("---\nname: demo\ndescription: yes\nmetadata:\n  version: 1.0\n  flag: true\n  empty: null\n---\n");
    expect(parsed.fields).toEqual({ name: "demo", description: "yes", metadata: { version: "1.0", flag: "true", empty: "null" } });
  });

  it("supports folded and literal multi-line descriptions", () => {
    const parsed = parseSkillDocument("---\nname: demo\ndescription: >\n  first line\n  second line\n---\n");
    expect(parsed.fields?.description).toBe("first line second line\n");
  });

  it("only a line that is exactly --- closes the frontmatter", () => {
    const parsed = parseSkillDocument("---\nname: demo\ndescription: a --- b\n--- \n---\nrest\n");
    expect(parsed.problems.map((p) => p.code)).toContain("yaml_error");
    const ok = parseSkillDocument("---\nname: demo\ndescription: a --- b\n---\n--- not a delimiter\n");
    expect(ok.fields).toEqual({ name: "demo", description: "a --- b" });
    expect(ok.body).toBe("--- not a delimiter");
  });

  it("reports a missing opening line", () => {
    expect(codes("# No frontmatter here")).toEqual(["frontmatter_missing"]);
    expect(codes("")).toEqual(["frontmatter_missing"]);
    expect(codes("\n---\nname: x\n---\n")).toEqual(["frontmatter_missing"]);
  });

  it("reports unterminated frontmatter", () => {
    expect(codes("---\nname: my-skill\ndescription: A test skill\n")).toEqual(["frontmatter_unterminated"]);
  });

  it("reports invalid YAML", () => {
    expect(codes("---\nname: [invalid\ndescription: broken\n---\nBody here\n")).toContain("yaml_error");
    expect(codes("---\nname: a\nname: b\n---\n")).toEqual(["yaml_error"]);
  });

  it("requires a mapping", () => {
    expect(codes("---\n- just\n- a\n- list\n---\nBody\n")).toEqual(["frontmatter_not_mapping"]);
    expect(codes("---\njust a string\n---\n")).toEqual(["frontmatter_not_mapping"]);
    expect(codes("---\n---\nbody\n")).toEqual(["frontmatter_not_mapping"]);
  });

  it("rejects explicit tags other than the failsafe ones", () => {
    expect(codes("---\nname: !!int 3\ndescription: x\n---\n")).toEqual(["yaml_tag"]);
    expect(codes("---\nname: !custom x\ndescription: !!python/object:os.system ls\n---\n")).toEqual(["yaml_tag", "yaml_tag"]);
    expect(codes("---\nname: !!binary aGk=\ndescription: x\n---\n")).toEqual(["yaml_tag"]);
    const allowed = parseSkillDocument("---\nname: !!str demo\ndescription: x\nmetadata: !!map {a: b}\nallowed-tools: !!seq [Read]\n---\n");
    expect(allowed.problems).toEqual([]);
  });

  it("rejects non-scalar mapping keys", () => {
    expect(codes("---\n? [a, b]\n: c\nname: x\n---\n")).toEqual(["yaml_error"]);
  });

  it("turns a billion-laughs alias bomb into a diagnostic, quickly", () => {
    let yaml = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
    for (let i = 1; i < 12; i++) yaml += `a${i}: &a${i} [${Array(9).fill(`*a${i - 1}`).join(", ")}]\n`;
    expect(codes(`---\nname: bomb\ndescription: x\n${yaml}---\n`)).toEqual(["yaml_alias_limit"]);
  });

  it("allows a few plain aliases", () => {
    const parsed = parseSkillDocument("---\nname: &n demo\ndescription: *n\n---\n");
    expect(parsed.fields).toEqual({ name: "demo", description: "demo" });
  });

  it("reports frontmatter over MAX_FRONTMATTER_BYTES (100 KiB) without parsing it", () => {
    const filler = `# ${"x".repeat(98)}\n`.repeat(1024);
    const parsed = parseSkillDocument(`---\nname: big\ndescription: x\n${filler}---\nbody\n`);
    expect(parsed.problems.map((p) => p.code)).toEqual(["frontmatter_too_large"]);
    expect(parsed.problems[0]!.message).toContain(String(MAX_FRONTMATTER_BYTES));
    expect(parsed.body).toBe("body");
  });

  it("accepts frontmatter of exactly MAX_FRONTMATTER_BYTES", () => {
    const head = "name: edge\ndescription: x\n";
    const pad = MAX_FRONTMATTER_BYTES - head.length - 1;
    const yaml = `${head}#${"y".repeat(pad - 1)}`;
    expect(Buffer.byteLength(yaml)).toBe(MAX_FRONTMATTER_BYTES - 1);
    expect(parseSkillDocument(`---\n${yaml}\n---\n`).problems).toEqual([]);
    expect(parseSkillDocument(`---\n${yaml}yy\n---\n`).problems.map((p) => p.code)).toEqual(["frontmatter_too_large"]);
  });

  it("survives deep flow nesting", () => {
    const deep = `---\nname: deep\ndescription: ${"[".repeat(5000)}${"]".repeat(5000)}\n---\n`;
    const parsed = parseSkillDocument(deep);
    expect(parsed.fields === undefined ? parsed.problems.length : typeof parsed.fields.description).not.toBe("string");
  });
});

describe("S-3 a frontmatter text is parsed once", () => {
  const doc = (description: string, body = "Body.") => `---\nname: demo\nmetadata:\n  tags: [a, b]\ndescription: ${description}\n---\n${body}\n`;

  it("hands every caller the same deeply frozen parse of the same text, whatever the body; another text gets its own", () => {
    const first = parseSkillDocument(doc("Memo one."));
    const again = parseSkillDocument(doc("Memo one.", "Another body."));
    expect(again.fields).toBe(first.fields);
    expect(again.body).toBe("Another body.");
    expect(Object.isFrozen(first.fields)).toBe(true);
    expect(Object.isFrozen((first.fields!.metadata as { tags: string[] }).tags)).toBe(true);
    expect(() => ((first.fields as Record<string, unknown>).name = "changed")).toThrow(TypeError);
    const other = parseSkillDocument(doc("Memo two."));
    expect(other.fields).not.toBe(first.fields);
    expect(other.fields!.description).toBe("Memo two.");
    const broken = parseSkillDocument("---\nname: [unclosed\n---\n");
    expect(parseSkillDocument("---\nname: [unclosed\n---\n").problems).toBe(broken.problems);
    expect(Object.isFrozen(broken.problems[0])).toBe(true);
  });

  it(`keeps at most MAX_FRONTMATTER_MEMO_ENTRIES (${MAX_FRONTMATTER_MEMO_ENTRIES}) parses: past that it starts afresh`, () => {
    const first = parseSkillDocument(doc("Bound 0."));
    for (let i = 1; i <= MAX_FRONTMATTER_MEMO_ENTRIES; i++) parseSkillDocument(doc(`Bound ${i}.`));
    const later = parseSkillDocument(doc("Bound 0."));
    expect(later.fields).toEqual(first.fields);
    expect(later.fields).not.toBe(first.fields);
  });
});

describe("B invalid UTF-8", () => {
  it("decodeUtf8 refuses invalid sequences and keeps valid ones", () => {
    expect(decodeUtf8(Buffer.from([0x2d, 0xff, 0xfe]))).toBeUndefined();
    expect(decodeUtf8(Buffer.from("技能 ok", "utf8"))).toBe("技能 ok");
  });
});
