/** fast-check generators for hostile input: YAML-ish documents, alias bombs, paths, whitespace, names. */
import fc from "fast-check";

/** Runs per property: enough to explore, few enough that each property finishes in seconds on 2 cores. */
export const PROPERTY_RUNS = 300;

/** Pieces YAML is made of, weighted towards the ones that change how a parser behaves. */
const YAML_PIECES = [
  "name", "description", "metadata", "allowed-tools", "x", "a", "é", "技能", "-", "--", "---", "...",
  ": ", ":", "- ", "? ", "[", "]", "{", "}", ",", "&a ", "&b ", "*a", "*b", "!!str ", "!!map ", "!!seq ",
  "!!int ", "!!binary ", "!foo ", "!<tag:x> ", "%YAML 1.2", "%TAG ! tag:x:", "|", ">", "|-", ">+", "'", '"',
  "\\", "#", "\n", "\n", "\n  ", "\n    ", "  ", "\t", "\r", "\u0000", "\uFEFF", "\u2028", "@", "`", "%",
];

/** A string stitched from YAML syntax pieces: anchors, aliases, tags, flow and block structure. */
export const yamlish: fc.Arbitrary<string> = fc
  .array(fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...YAML_PIECES) }, { weight: 1, arbitrary: fc.string({ maxLength: 6 }) }), { maxLength: 60 })
  .map((pieces) => pieces.join(""));

/** A SKILL.md-shaped text: delimiters around YAML-ish frontmatter, then a body. */
export const skillDocument: fc.Arbitrary<string> = fc
  .tuple(yamlish, fc.string({ maxLength: 40 }), fc.boolean())
  .map(([yaml, body, closed]) => (closed ? `---\n${yaml}\n---\n${body}` : `---\n${yaml}\n${body}`));

/** Any text a file could hold: arbitrary code units (lone surrogates too), documents, YAML pieces. */
export const anyText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 200 }),
  fc.string({ unit: "grapheme", maxLength: 80 }),
  skillDocument,
  yamlish,
);

/** An exponential alias document ("billion laughs"): `levels` anchors, each aliasing the previous `fanout` times. */
export interface AliasBomb {
  readonly levels: number;
  readonly fanout: number;
  readonly text: string;
}

export const aliasBomb: fc.Arbitrary<AliasBomb> = fc
  .record({ levels: fc.integer({ min: 1, max: 12 }), fanout: fc.integer({ min: 1, max: 10 }), flow: fc.boolean() })
  .map(({ levels, fanout, flow }) => {
    const lines = ["name: bomb", "description: laughs", `l0: &l0 "lol"`];
    for (let level = 1; level <= levels; level++) {
      const items = Array.from({ length: fanout }, () => `*l${level - 1}`);
      lines.push(flow ? `l${level}: &l${level} [${items.join(", ")}]` : `l${level}: &l${level}\n${items.map((i) => `  - ${i}`).join("\n")}`);
    }
    return { levels, fanout, text: lines.join("\n") };
  });

/** Path-like strings built from the segments R-3 cares about, plus arbitrary text. */
export const pathish: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(
      fc.array(fc.constantFrom("a", "b.txt", "..", ".", "", "\\", "\0", "/", "...", "é", "a\\b", " ", "~", "%2e%2e", "\u2215", "\uFF0E\uFF0E"), { maxLength: 12 }),
      fc.constantFrom("/", ""),
    )
    .map(([parts, separator]) => parts.join(separator)),
  fc.array(fc.constantFrom("a", "..", ".", "", "\\", "\0", "x y", "é"), { maxLength: 20 }).map((parts) => parts.join("/")),
  fc.string({ unit: "binary", maxLength: 60 }),
);

/** Every character JavaScript's `\s` and `trim()` treat as whitespace, plus look-alikes that are not. */
const SPACES = [" ", "\t", "\n", "\r", "\v", "\f", "\u00A0", "\u1680", "\u2000", "\u200A", "\u2028", "\u2029", "\u202F", "\u205F", "\u3000", "\uFEFF"];
const NOT_SPACES = ["\u200B", "\u180E", "\u0085"];

/** Argument text with runs of mixed whitespace between short words. */
export const argumentText: fc.Arbitrary<string> = fc.oneof(
  fc
    .array(fc.oneof(fc.constantFrom(...SPACES, ...NOT_SPACES), fc.string({ minLength: 1, maxLength: 5 }), fc.constantFrom("a", "bb", "é", "/x")), { maxLength: 30 })
    .map((parts) => parts.join("")),
  fc.string({ unit: "binary", maxLength: 80 }),
);

/** Candidate skill names: plausible names, Unicode confusables, compatibility forms, random text. */
export const nameCandidate: fc.Arbitrary<string> = fc.oneof(
  fc.array(fc.constantFrom("a", "z", "0", "9", "-", "é", "e\u0301", "а", "ԁ", "ｄ", "Ａ", "ﬁ", "ß", "İ", "ǅ", "Ⅻ", "①", "_", " ", "\u200B", "技", "Σ", "ς", "\u0130", "ᵃ"), { maxLength: 70 }).map((p) => p.join("")),
  fc.string({ unit: "grapheme", maxLength: 70 }),
  fc.string({ unit: "binary", maxLength: 20 }),
);
