/** The documentation as a reader meets it: a guide apart from the reference, links that lead somewhere, no internal ids. */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const GUIDE = ["getting-started.md", "notebooks.md", "settings-and-scopes.md", "troubleshooting.md"].map((name) => join(ROOT, "docs", "guide", name));
const REFERENCE = readdirSync(join(ROOT, "docs")).filter((name) => name.endsWith(".md")).map((name) => join(ROOT, "docs", name));
const ALL = [join(ROOT, "README.md"), ...GUIDE, ...REFERENCE];
const read = (file: string): string => readFileSync(file, "utf8");

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

function anchors(file: string): Set<string> {
  const text = read(file).replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

describe("X docs: links", () => {
  it("every relative link in the README, the guide and the reference leads to a file and, with #, to a heading in it", () => {
    for (const file of ALL) {
      const text = read(file).replace(/```[\s\S]*?```/g, "");
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const [path, anchor] = target!.split("#") as [string, string | undefined];
        const linked = path === "" ? file : resolve(dirname(file), path);
        expect(existsSync(linked), `${file}: ${target}`).toBe(true);
        if (anchor !== undefined && linked.endsWith(".md")) expect(anchors(linked).has(anchor), `${file}: ${target}`).toBe(true);
      }
    }
  });
});

describe("X docs: a guide for users, apart from the reference", () => {
  it("has the four guide pages, listed in the README, with the three diagrams in Mermaid", () => {
    const readme = read(join(ROOT, "README.md"));
    for (const page of GUIDE) expect(readme).toContain(`docs/guide/${page.split("/").pop()}`);
    const diagrams = GUIDE.flatMap((page) => [...read(page).matchAll(/```mermaid\n([\s\S]*?)```/g)].map((m) => m[1]!));
    expect(diagrams).toHaveLength(3);
    expect(diagrams.some((d) => d.startsWith("flowchart") && d.includes("embedded") && d.includes("JSON-RPC"))).toBe(true);
    expect(diagrams.some((d) => d.startsWith("sequenceDiagram") && d.includes("POST /sessions"))).toBe(true);
    expect(diagrams.some((d) => d.includes("priv/skills") && d.includes("project") && d.includes("global"))).toBe(true);
  });

  it("README says what to install, how to put albedo on PATH, and where npm start opens the console", () => {
    const readme = read(join(ROOT, "README.md"));
    for (const fact of ["Node.js 20.19", "Python 3.9", "venv", "C++ toolchain", "bubblewrap", "npm link", "./bin/albedo", "albedo console"]) expect(readme).toContain(fact);
    expect(readme).toMatch(/`npm start` always opens\s+it on the albedo checkout itself/);
  });
});

describe("X docs: the reference says what the rules are", () => {
  it("cites no requirement ids and no files outside the repository", () => {
    for (const file of [...REFERENCE, ...GUIDE]) {
      expect(read(file), file).not.toMatch(/\b[SRCKDOXB]-\d+\b/);
      expect(read(file), file).not.toMatch(/SPEC\.md|\/work\//);
    }
  });

  it("no longer states the three wrong things: a {text} argument, --workspace for validate, a CLI without settings commands", () => {
    expect(read(join(ROOT, "docs", "rpc.md"))).not.toContain('{"text":');
    expect(read(join(ROOT, "docs", "rpc.md"))).toContain('commands.invoke("/demo", {"arguments": "raw argument text"})');
    expect(read(join(ROOT, "docs", "skills.md"))).not.toContain("All three commands take the workspace");
    expect(read(join(ROOT, "docs", "skills.md"))).toContain("`skills validate` takes no workspace");
    expect(read(join(ROOT, "docs", "settings.md"))).not.toContain("meant to be the only writer");
    expect(read(join(ROOT, "docs", "settings.md"))).toContain("albedo skills off pdf-processing [--project|--global]");
  });
});
