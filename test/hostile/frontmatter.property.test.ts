import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeUtf8 } from "../../src/json/index.js";
import { parseSkillDocument } from "../../src/skills/frontmatter.js";
import { MAX_NAME_LENGTH, MAX_YAML_ALIAS_COUNT, MAX_YAML_DEPTH } from "../../src/skills/limits.js";
import { normalizeName, validateSkillFields } from "../../src/skills/validate.js";
import { PROPERTY_RUNS, aliasBomb, anyText, nameCandidate, skillDocument, yamlish } from "./arbitraries.js";

type Parsed = ReturnType<typeof parseSkillDocument>;

/** Liveness bound for the child process that parses deep documents. */
const CHILD_LIMIT_MS = 30_000;

/** The invariant every parse result keeps: values xor problems, each problem a code and a message. */
function expectWellFormed(parsed: Parsed): void {
  expect(typeof parsed.body).toBe("string");
  expect(parsed.fields === undefined).toBe(parsed.problems.length > 0);
  for (const problem of parsed.problems) {
    expect(problem.code).toMatch(/^[a-z_]+$/);
    expect(typeof problem.message).toBe("string");
  }
  if (parsed.fields !== undefined) expect(typeof parsed.fields).toBe("object");
}

/**
 * Counts the nodes reachable from `value` (shared references counted each time they are reached, as
 * anything serialising the fields would), giving up past `cap` so the count itself stays bounded.
 */
function countNodes(value: unknown, cap: number): number {
  const stack: unknown[] = [value];
  let count = 0;
  while (stack.length > 0 && count <= cap) {
    const node = stack.pop();
    count++;
    if (Array.isArray(node)) stack.push(...node);
    else if (typeof node === "object" && node !== null) stack.push(...Object.values(node));
  }
  return count;
}

describe("S-3 B frontmatter parser never throws", () => {
  it("returns fields or problems for any string", () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expectWellFormed(parseSkillDocument(text));
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it("returns fields or problems for any bytes that decode, and decodeUtf8 refuses the rest without throwing", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.boolean(), (bytes, framed) => {
        const input = framed ? Buffer.concat([Buffer.from("---\nname: x\n"), bytes, Buffer.from("\n---\n")]) : Buffer.from(bytes);
        const text = decodeUtf8(input);
        if (text === undefined) expect(() => new TextDecoder("utf-8", { fatal: true }).decode(input)).toThrow();
        else expectWellFormed(parseSkillDocument(text));
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it("treats YAML-ish frontmatter with anchors, aliases and tags the same way every time", () => {
    fc.assert(
      fc.property(yamlish, (yaml) => {
        const text = `---\n${yaml}\n---\nbody`;
        const first = parseSkillDocument(text);
        expectWellFormed(first);
        expect(parseSkillDocument(text)).toEqual(first);
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });
});

describe("S-3 BOM and CRLF", () => {
  const plain = fc.oneof(skillDocument, anyText).filter((text) => !text.includes("\r") && !text.startsWith("\uFEFF"));

  it("a UTF-8 BOM before the text parses the same as the plain form", () => {
    fc.assert(
      fc.property(plain, (text) => {
        expect(parseSkillDocument(`\uFEFF${text}`)).toEqual(parseSkillDocument(text));
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it("CRLF line ends, with or without a BOM, parse the same as LF", () => {
    fc.assert(
      fc.property(plain, fc.boolean(), (text, bom) => {
        const crlf = `${bom ? "\uFEFF" : ""}${text.replace(/\n/g, "\r\n")}`;
        expect(parseSkillDocument(crlf)).toEqual(parseSkillDocument(text));
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });
});

describe("B YAML bombs and deep nesting stay bounded", () => {
  it("alias expansion never yields more than MAX_YAML_ALIAS_COUNT copies of the source (else yaml_alias_limit)", () => {
    fc.assert(
      fc.property(aliasBomb, ({ text, levels, fanout }) => {
        const parsed = parseSkillDocument(`---\n${text}\n---\n`);
        expectWellFormed(parsed);
        // Each permitted alias resolution can copy at most the whole source once.
        const bound = (text.length + 1) * (MAX_YAML_ALIAS_COUNT + 1);
        const codes = parsed.problems.map((p) => p.code);
        if (parsed.fields === undefined) expect(codes).toEqual(["yaml_alias_limit"]);
        else expect(countNodes(parsed.fields, bound)).toBeLessThanOrEqual(bound);
        if (fanout ** levels > bound) expect(codes).toEqual(["yaml_alias_limit"]);
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it("flow or block nesting past MAX_YAML_DEPTH is yaml_depth_limit; within it, no depth problem", () => {
    const flow = fc.array(fc.constantFrom(["[", "]"], ["{a: ", "}"], ["&x [", "]"], ["!!seq [", "]"]), { minLength: 1, maxLength: 3 });
    const nested = fc.oneof(
      fc.tuple(flow, fc.integer({ min: 1, max: 3000 })).map(([kinds, depth]) => {
        const open = Array.from({ length: depth }, (_, i) => kinds[i % kinds.length]![0]).join("");
        const close = Array.from({ length: depth }, (_, i) => kinds[(depth - 1 - i) % kinds.length]![1]).join("");
        return { depth, yaml: `x: ${open}y${close}` };
      }),
      fc.integer({ min: 1, max: 3000 }).map((depth) => ({ depth, yaml: `x:\n  ${"- ".repeat(depth)}y` })),
    );
    fc.assert(
      fc.property(nested, ({ depth, yaml }) => {
        const parsed = parseSkillDocument(`---\nname: deep\ndescription: d\n${yaml}\n---\n`);
        expectWellFormed(parsed);
        // The top-level mapping is one level; `depth` collections sit inside it.
        const codes = parsed.problems.map((p) => p.code);
        if (depth + 1 > MAX_YAML_DEPTH) expect(codes).toEqual(["yaml_depth_limit"]);
        else expect(codes).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });
});

describe("S-4 name verdict invariants", () => {
  it("a name that passes is NFKC-stable, lowercase, at most 64 code points, hyphen-clean, and equals its directory", () => {
    fc.assert(
      fc.property(nameCandidate, fc.boolean(), (raw, sameDir) => {
        const dirName = sameDir ? raw.trim() : raw.trim().normalize("NFD");
        const result = validateSkillFields({ name: raw, description: "d" }, dirName, { strict: true });
        const nameErrors = result.errors.filter((e) => e.code.startsWith("name") || e.code.endsWith("_name"));
        if (nameErrors.length > 0) return;
        const name = result.name!;
        expect(name.normalize("NFKC")).toBe(name);
        expect(name.toLowerCase()).toBe(name);
        expect([...name].length).toBeLessThanOrEqual(MAX_NAME_LENGTH);
        expect(name.length).toBeGreaterThan(0);
        expect(name).not.toContain("--");
        expect(name.startsWith("-") || name.endsWith("-")).toBe(false);
        expect(name).toMatch(/^[\p{L}\p{N}-]+$/u);
        expect(normalizeName(dirName)).toBe(name);
      }),
      { numRuns: PROPERTY_RUNS * 3 },
    );
  });

  it("never throws for arbitrary field values and reports every problem with a code", () => {
    const fields = fc.dictionary(fc.oneof(fc.constantFrom("name", "description", "license", "compatibility", "metadata", "allowed-tools"), fc.string()), fc.anything());
    fc.assert(
      fc.property(fields, fc.string(), fc.boolean(), (values, dirName, strict) => {
        const result = validateSkillFields(values, dirName, { strict });
        for (const problem of [...result.errors, ...result.warnings]) expect(problem.code).toMatch(/^[a-z_]+$/);
        if (!("name" in values)) expect(result.errors.map((e) => e.code)).toContain("missing_name");
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });
});

describe("B deep nesting cannot abort the process", () => {
  it("a fresh Node process parsing ever deeper frontmatter exits cleanly with yaml_depth_limit each time", () => {
    // In a plain process the yaml composer's stack overflow could end in a fatal V8 abort (not a
    // catchable error) once a shallower document had warmed it up; the depth bound must prevent it.
    const module = pathToFileURL(join(process.cwd(), "dist", "src", "skills", "frontmatter.js")).href;
    const script = [
      `const { parseSkillDocument } = await import(${JSON.stringify(module)});`,
      "const codes = [];",
      "for (const n of [1000, 10000, 20000, 1000, 20000]) {",
      "  const yaml = `x: ${'['.repeat(n)}${']'.repeat(n)}`;",
      "  codes.push(parseSkillDocument(`---\\nname: a\\n${yaml}\\n---\\n`).problems.map((p) => p.code).join());",
      "}",
      "console.log(JSON.stringify(codes));",
    ].join("\n");
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: CHILD_LIMIT_MS });
    expect(child.signal, child.stderr.slice(0, 400)).toBeNull();
    expect(child.status, child.stderr.slice(0, 400)).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual(Array(5).fill("yaml_depth_limit"));
  });
});
