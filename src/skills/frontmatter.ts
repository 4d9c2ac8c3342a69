import { isMap, isPair, isScalar, parseDocument, visit } from "yaml";
import { deepFreeze, wellFormedJson } from "../json/index.js";
import { MAX_FRONTMATTER_BYTES, MAX_FRONTMATTER_MEMO_CHARS, MAX_FRONTMATTER_MEMO_ENTRIES, MAX_YAML_ALIAS_COUNT, MAX_YAML_DEPTH } from "./limits.js";
import type { Problem } from "./types.js";
import { yamlNestingDepth } from "./yamlDepth.js";
import { yamlProblem } from "./yamlHints.js";

/** A SKILL.md split into frontmatter values and body; `fields` is undefined when parsing failed. Frozen: parses are shared. */
export interface ParsedSkillDocument {
  readonly fields: Readonly<Record<string, unknown>> | undefined;
  readonly body: string;
  readonly problems: readonly Problem[];
}

/** What one frontmatter text parses to; deeply frozen, since the memo hands the same one to every caller. */
interface FrontmatterParse {
  readonly fields: Readonly<Record<string, unknown>> | undefined;
  readonly problems: readonly Problem[];
}

/** The only explicit tags a failsafe document may carry. */
const FAILSAFE_TAGS = new Set(["tag:yaml.org,2002:str", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"]);

const DELIMITER = /^---$/;

/** Characters YAML excludes from its printable set that the yaml package would still accept raw: C0 controls but tab/LF/CR, and DEL. */
const NON_PRINTABLE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

/** Splits a SKILL.md text into frontmatter and body and parses the frontmatter; never throws. */
export function parseSkillDocument(text: string): ParsedSkillDocument {
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const lines = source.split(/\r?\n/);
  if (lines.length === 0 || !DELIMITER.test(lines[0]!)) {
    return failed("", { code: "frontmatter_missing", message: "SKILL.md must start with a line `---` opening the YAML frontmatter" });
  }
  const close = lines.findIndex((line, i) => i > 0 && DELIMITER.test(line));
  if (close < 0) {
    return failed("", { code: "frontmatter_unterminated", message: "the frontmatter is not closed by a line `---`" });
  }
  const yamlText = lines.slice(1, close).join("\n");
  const body = lines.slice(close + 1).join("\n").trim();
  const bytes = Buffer.byteLength(yamlText, "utf8");
  if (bytes > MAX_FRONTMATTER_BYTES) {
    return failed(body, {
      code: "frontmatter_too_large",
      message: `frontmatter is ${bytes} bytes; the limit is MAX_FRONTMATTER_BYTES = ${MAX_FRONTMATTER_BYTES}`,
    });
  }
  const { fields, problems } = memoizedFrontmatter(yamlText);
  return { fields, body, problems };
}

/**
 * Parses by frontmatter text. A parse is a function of the text alone, so the same text (a skill
 * every session discovers, a SKILL.md reread for a pin check or an activation) is parsed once; the
 * YAML parse is most of what either costs. Bounded by MAX_FRONTMATTER_MEMO_ENTRIES and
 * MAX_FRONTMATTER_MEMO_CHARS, and cleared when a new text would pass either.
 */
const frontmatterMemo = new Map<string, FrontmatterParse>();
let frontmatterMemoChars = 0;

function memoizedFrontmatter(yamlText: string): FrontmatterParse {
  const kept = frontmatterMemo.get(yamlText);
  if (kept !== undefined) return kept;
  const parsed = deepFreeze(parseFrontmatterYaml(yamlText));
  if (frontmatterMemo.size >= MAX_FRONTMATTER_MEMO_ENTRIES || frontmatterMemoChars + yamlText.length > MAX_FRONTMATTER_MEMO_CHARS) {
    frontmatterMemo.clear();
    frontmatterMemoChars = 0;
  }
  frontmatterMemo.set(yamlText, parsed);
  frontmatterMemoChars += yamlText.length;
  return parsed;
}

function failed(body: string, problem: Problem): ParsedSkillDocument {
  return { fields: undefined, body, problems: Object.freeze([Object.freeze(problem)]) };
}

/** Parses frontmatter YAML with the failsafe schema; fields is undefined when any problem was found. */
function parseFrontmatterYaml(yamlText: string): { fields: Record<string, unknown> | undefined; problems: Problem[] } {
  const problems: Problem[] = [];
  const control = controlCharacterProblem(yamlText);
  if (control !== undefined) return { fields: undefined, problems: [control] };
  let doc;
  try {
    const depth = yamlNestingDepth(yamlText, MAX_YAML_DEPTH);
    if (depth > MAX_YAML_DEPTH) {
      const message = `YAML nests at least ${depth} collections deep; the limit is MAX_YAML_DEPTH = ${MAX_YAML_DEPTH}`;
      return { fields: undefined, problems: [{ code: "yaml_depth_limit", message }] };
    }
    doc = parseDocument(yamlText, { schema: "failsafe", logLevel: "error", uniqueKeys: true });
  } catch (error) {
    return { fields: undefined, problems: [{ code: "yaml_error", message: `invalid YAML: ${messageOf(error)}` }] };
  }
  // The YAML text starts on SKILL.md's second line, after the opening `---`.
  for (const error of doc.errors) problems.push(yamlProblem({ code: error.code, message: error.message, line: error.linePos?.[0].line }, yamlText, 2));
  problems.push(...structureProblems(doc));
  if (problems.length > 0) return { fields: undefined, problems };
  if (!isMap(doc.contents)) {
    return { fields: undefined, problems: [{ code: "frontmatter_not_mapping", message: "the frontmatter must be a YAML mapping of fields" }] };
  }
  try {
    // A double-quoted "\ud800" escape decodes to a lone surrogate, which no catalog or prompt may carry.
    return { fields: wellFormedJson(doc.toJS({ maxAliasCount: MAX_YAML_ALIAS_COUNT }) as Record<string, unknown>), problems };
  } catch (error) {
    if (/alias count/i.test(messageOf(error))) {
      return {
        fields: undefined,
        problems: [{ code: "yaml_alias_limit", message: `YAML aliases expand past MAX_YAML_ALIAS_COUNT = ${MAX_YAML_ALIAS_COUNT}` }],
      };
    }
    return { fields: undefined, problems: [{ code: "yaml_error", message: `invalid YAML: ${firstLine(messageOf(error))}` }] };
  }
}

/** A raw NUL or other control character in the YAML, named with its SKILL.md line; undefined when there is none. */
function controlCharacterProblem(yamlText: string): Problem | undefined {
  const found = NON_PRINTABLE.exec(yamlText);
  if (found === null) return undefined;
  // yamlText starts on the line after the opening `---`.
  const line = yamlText.slice(0, found.index).split("\n").length + 1;
  const code = found[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
  return { code: "yaml_error", message: `invalid YAML: control character U+${code} on line ${line}` };
}

/** Explicit non-failsafe tags and non-scalar mapping keys, each reported once per node. */
function structureProblems(doc: ReturnType<typeof parseDocument>): Problem[] {
  const problems: Problem[] = [];
  visit(doc, {
    Node(_key, node) {
      if (node.tag !== undefined && !FAILSAFE_TAGS.has(node.tag)) {
        problems.push({ code: "yaml_tag", message: `YAML tag ${node.tag} is not allowed; only plain strings, mappings and sequences are` });
      }
    },
    Pair(_key, pair) {
      if (isPair(pair) && pair.key !== null && !isScalar(pair.key)) {
        problems.push({ code: "yaml_error", message: "invalid YAML: mapping keys must be plain strings" });
      }
    },
  });
  return problems;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function firstLine(message: string): string {
  return message.split("\n")[0]!.trim();
}
