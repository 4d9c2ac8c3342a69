import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { discoverCandidates, discoverCatalog, MAX_CANDIDATES, MAX_SKILL_FILE_BYTES, type Candidate } from "../../src/skills/index.js";
import type { CatalogSnapshot } from "../../src/skills/types.js";
import {
  LIVENESS_MS, billionLaughs, junkBytes, linkChain, makeFifo, makeLayout, skillFilePath, sparseFile, type Layout,
} from "./trees.js";
import { skillText, writeSkill } from "../support/skills.js";

/** Size of the sparse SKILL.md: 50 MiB of holes, far past MAX_SKILL_FILE_BYTES. */
const HUGE_FILE_BYTES = 50 * 1024 * 1024;
/** More links than Linux follows in one lookup (40), so resolving the chain fails with ELOOP. */
const LONG_CHAIN_LINKS = 45;
/** A chain Linux resolves. */
const SHORT_CHAIN_LINKS = 20;

/** One nasty candidate: how to build it under the root, and the diagnostic codes it must get. */
interface NastyCase {
  readonly dir: string;
  readonly what: string;
  readonly build: (root: string, layout: Layout) => void;
  readonly codes: readonly string[];
}

const CASES: readonly NastyCase[] = [
  { dir: "laughs", what: "a billion-laughs alias bomb", build: (r) => writeSkill(r, "laughs", { frontmatter: billionLaughs() }), codes: ["yaml_alias_limit"] },
  {
    dir: "nest-huge", what: "10^5-deep flow nesting (past the frontmatter bound)",
    build: (r) => writeSkill(r, "nest-huge", { frontmatter: `x: ${"[".repeat(100_000)}${"]".repeat(100_000)}` }), codes: ["frontmatter_too_large"],
  },
  {
    dir: "nest-flow", what: "20,000-deep flow nesting inside the frontmatter bound",
    build: (r) => writeSkill(r, "nest-flow", { frontmatter: `x: ${"{a: ".repeat(5_000)}${"[".repeat(15_000)}${"]".repeat(15_000)}${"}".repeat(5_000)}` }), codes: ["yaml_depth_limit"],
  },
  {
    dir: "nest-block", what: "20,000-deep compact block sequences",
    build: (r) => writeSkill(r, "nest-block", { frontmatter: `x:\n  ${"- ".repeat(20_000)}y` }), codes: ["yaml_depth_limit"],
  },
  {
    dir: "bad-utf8", what: "invalid UTF-8 in the description",
    build: (r) => writeSkill(r, "bad-utf8", Buffer.concat([Buffer.from("---\nname: bad-utf8\ndescription: caf"), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from("\n---\n")])),
    codes: ["invalid_utf8"],
  },
  {
    dir: "overlong", what: "an overlong UTF-8 encoding of '/'",
    build: (r) => writeSkill(r, "overlong", Buffer.concat([Buffer.from("---\nname: overlong\ndescription: a"), Buffer.from([0xc0, 0xaf]), Buffer.from("\n---\n")])), codes: ["invalid_utf8"],
  },
  { dir: "nul-desc", what: "a raw NUL byte in a plain scalar", build: (r) => writeSkill(r, "nul-desc", "---\nname: nul-desc\ndescription: a\0b\n---\n"), codes: ["yaml_error"] },
  { dir: "ctrl-key", what: "a raw escape character in a key", build: (r) => writeSkill(r, "ctrl-key", "---\nname: ctrl-key\ndescription: d\nx\u001b[2J: y\n---\n"), codes: ["yaml_error"] },
  { dir: "nul-name", what: "a NUL byte in a quoted name", build: (r) => writeSkill(r, "nul-name", '---\nname: "nul\\0name"\ndescription: d\n---\n'), codes: ["name_invalid_characters", "name_directory_mismatch"] },
  { dir: "huge", what: "a 50 MiB sparse SKILL.md", build: (r) => sparseFile(skillFilePath(r, "huge"), HUGE_FILE_BYTES), codes: ["file_too_large"] },
  { dir: "junk", what: "binary junk", build: (r) => writeSkill(r, "junk", junkBytes(4096)), codes: ["invalid_utf8"] },
  { dir: "junk-text", what: "text junk without frontmatter", build: (r) => writeSkill(r, "junk-text", "\u0000\u0001 PK\u0003\u0004 ~~~ not a skill"), codes: ["frontmatter_missing"] },
  { dir: "zero", what: "SKILL.md linked to /dev/zero", build: (r) => symlinkSync("/dev/zero", skillFilePath(r, "zero")), codes: ["not_regular_file"] },
  { dir: "null-dev", what: "SKILL.md linked to /dev/null", build: (r) => symlinkSync("/dev/null", skillFilePath(r, "null-dev")), codes: ["not_regular_file"] },
  { dir: "fifo", what: "a FIFO where SKILL.md should be", build: (r) => makeFifo(skillFilePath(r, "fifo")), codes: ["not_regular_file"] },
  { dir: "md-dir", what: "a directory named SKILL.md", build: (r) => mkdirSync(skillFilePath(r, "md-dir")), codes: ["not_regular_file"] },
  { dir: "self-md", what: "SKILL.md linked to itself", build: (r) => symlinkSync("SKILL.md", skillFilePath(r, "self-md")), codes: ["link_cycle"] },
  { dir: "cycle-a", what: "a two-link directory cycle (a)", build: (r) => symlinkSync("cycle-b", join(r, "cycle-a")), codes: ["link_cycle"] },
  { dir: "cycle-b", what: "a two-link directory cycle (b)", build: (r) => symlinkSync("cycle-a", join(r, "cycle-b")), codes: ["link_cycle"] },
  {
    dir: "chain-long", what: `a chain of ${LONG_CHAIN_LINKS} directory links`,
    build: (r, l) => {
      const hops = join(l.base, "hops-long");
      mkdirSync(hops);
      writeSkill(l.base, "target-long", skillText("chain-long"));
      symlinkSync(linkChain(hops, "h", LONG_CHAIN_LINKS, join(l.base, "target-long")), join(r, "chain-long"));
    },
    codes: ["link_cycle"],
  },
  { dir: "broken", what: "SKILL.md linked to nothing", build: (r) => symlinkSync("nowhere.md", skillFilePath(r, "broken")), codes: ["broken_link"] },
  { dir: "раураl", what: "a Cyrillic look-alike directory for the Latin name paypal", build: (r) => writeSkill(r, "раураl", skillText("paypal")), codes: ["name_directory_mismatch"] },
  { dir: "de\u200bmo", what: "a zero-width space inside the name", build: (r) => writeSkill(r, "de\u200bmo"), codes: ["name_invalid_characters"] },
  { dir: "İstanbul", what: "a dotted capital I", build: (r) => writeSkill(r, "İstanbul"), codes: ["name_not_lowercase"] },
  { dir: "tag-bomb", what: "custom and core-schema tags", build: (r) => writeSkill(r, "tag-bomb", { frontmatter: "x: !!python/object:os.system ls\ny: !!int 3" }), codes: ["yaml_tag"] },
];

/** Valid skills that must load beside the corpus: confusable and compatibility forms included. */
const VALID = [
  { dir: "good", build: (r: string) => writeSkill(r, "good"), name: "good" },
  { dir: "demo", build: (r: string) => writeSkill(r, "demo"), name: "demo" },
  { dir: "ԁemo", build: (r: string) => writeSkill(r, "ԁemo"), name: "ԁemo" },
  { dir: "ｗｉｄｅ", build: (r: string) => writeSkill(r, "ｗｉｄｅ", skillText("wide")), name: "wide" },
  { dir: "ﬁle", build: (r: string) => writeSkill(r, "ﬁle", skillText("file")), name: "file" },
  {
    dir: "chain-short", name: "chain-short",
    build: (r: string, l: Layout) => {
      mkdirSync(join(l.base, "hops-short"));
      writeSkill(l.base, "target-short", skillText("chain-short"));
      symlinkSync(linkChain(join(l.base, "hops-short"), "h", SHORT_CHAIN_LINKS, join(l.base, "target-short")), join(r, "chain-short"));
    },
  },
];

describe("B S-5 S-6 hostile skill corpus", () => {
  let layout: Layout;
  let candidates: readonly Candidate[];
  let snapshot: CatalogSnapshot;

  beforeAll(async () => {
    layout = makeLayout();
    for (const nasty of CASES) nasty.build(layout.root, layout);
    for (const valid of VALID) valid.build(layout.root, layout);
    // A user root that is a link to a device: a root diagnostic, not a failure.
    mkdirSync(join(layout.home, ".agents"), { recursive: true });
    symlinkSync("/dev/zero", join(layout.home, ".agents", "skills"));
    const options = { workspace: layout.workspace, home: layout.home, install: layout.install };
    candidates = (await discoverCandidates(options)).candidates;
    snapshot = await discoverCatalog(options);
  }, LIVENESS_MS);
  afterAll(() => layout?.remove());

  it.each(CASES.map((c) => [c.what, c] as const))("%s gets its diagnostic", (_what, nasty) => {
    const candidate = candidates.find((c) => c.dirName === nasty.dir);
    expect(candidate, nasty.dir).toBeDefined();
    expect(candidate!.status).toBe("invalid");
    const codes = candidate!.diagnostics.map((d) => d.code);
    for (const code of nasty.codes) expect(codes).toContain(code);
    for (const diagnostic of candidate!.diagnostics) expect(diagnostic.message.length).toBeGreaterThan(0);
  });

  it("the 50 MiB file is refused by its size, which the message names with the limit", () => {
    const huge = candidates.find((c) => c.dirName === "huge")!;
    expect(huge.size).toBe(HUGE_FILE_BYTES);
    expect(huge.diagnostics[0]!.message).toContain(String(HUGE_FILE_BYTES));
    expect(huge.diagnostics[0]!.message).toContain(`MAX_SKILL_FILE_BYTES = ${MAX_SKILL_FILE_BYTES}`);
  });

  it("every valid skill still loads, confusables stay distinct, compatibility forms take their NFKC name", () => {
    expect(snapshot.skills.map((s) => s.name)).toEqual([...VALID.map((v) => v.name)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    const wide = snapshot.skills.find((s) => s.name === "wide")!;
    expect(wide.source).toBe(join(layout.root, "ｗｉｄｅ", "SKILL.md"));
    expect(snapshot.diagnostics.filter((d) => d.code === "collision")).toEqual([]);
  });

  it("the device-linked user root is one not_directory diagnostic", () => {
    const root = join(layout.home, ".agents", "skills");
    expect(snapshot.diagnostics.filter((d) => d.path === root).map((d) => d.code)).toEqual(["not_directory"]);
  });

  it("a second discovery of the same hostile tree gives the same revision", async () => {
    const again = await discoverCatalog({ workspace: layout.workspace, home: layout.home, install: layout.install });
    expect(again.revision).toBe(snapshot.revision);
  }, LIVENESS_MS);
});

describe("S-6 a thousand skills in one root", () => {
  let layout: Layout;
  beforeAll(() => {
    layout = makeLayout();
    for (let i = 0; i < 1000; i++) writeSkill(layout.root, `s${String(i).padStart(4, "0")}`);
  }, LIVENESS_MS);
  afterAll(() => layout?.remove());

  it(`examines MAX_CANDIDATES and records one "N more candidates not examined" diagnostic`, async () => {
    const snapshot = await discoverCatalog({ workspace: layout.workspace, home: layout.home, install: layout.install });
    expect(snapshot.skills).toHaveLength(MAX_CANDIDATES);
    expect(snapshot.skills.at(-1)!.name).toBe(`s${String(MAX_CANDIDATES - 1).padStart(4, "0")}`);
    const dropped = snapshot.diagnostics.filter((d) => d.code === "candidates_dropped");
    expect(dropped).toHaveLength(1);
    expect(dropped[0]!.message).toContain(`${1000 - MAX_CANDIDATES} more candidates not examined`);
    expect(dropped[0]!.path).toBe(layout.root);
  }, LIVENESS_MS);
});

describe("S-11 B hostile instruction files", () => {
  let layout: Layout;
  beforeAll(() => (layout = makeLayout()));
  afterAll(() => layout?.remove());

  it("AGENTS.md as a FIFO or a /dev/zero link is a diagnostic and never blocks discovery", async () => {
    makeFifo(join(layout.workspace, "AGENTS.md"));
    mkdirSync(join(layout.home, ".albedo"), { recursive: true });
    symlinkSync("/dev/zero", join(layout.home, ".albedo", "AGENTS.md"));
    writeSkill(layout.root, "good");
    const snapshot = await discoverCatalog({ workspace: layout.workspace, home: layout.home, install: layout.install });
    expect(snapshot.skills.map((s) => s.name)).toEqual(["good"]);
    expect(snapshot.instructions).toEqual([]);
    expect(snapshot.diagnostics.filter((d) => d.code === "not_regular_file").map((d) => d.path).sort()).toEqual(
      [join(layout.home, ".albedo", "AGENTS.md"), join(layout.workspace, "AGENTS.md")].sort(),
    );
  }, LIVENESS_MS);
});
