import { basename, dirname, join } from "node:path";
import { decodeUtf8 } from "../json/index.js";
import { parseSkillDocument } from "./frontmatter.js";
import { isProblem, probe, readBoundedFile } from "./files.js";
import { MAX_SKILL_FILE_BYTES } from "./limits.js";
import type { Problem } from "./types.js";
import { validateSkillFields } from "./validate.js";

/** Verdict of `albedo skills validate` on one skill (X). */
export interface SkillValidation {
  readonly valid: boolean;
  readonly errors: Problem[];
  readonly warnings: Problem[];
}

/** File names accepted as a skill file by validation, in preference order (skills-ref parity). */
export const SKILL_FILE_NAMES: readonly string[] = ["SKILL.md", "skill.md"];

function invalid(code: string, message: string): SkillValidation {
  return { valid: false, errors: [{ code, message }], warnings: [] };
}

/** Finds the skill file for a path that is a skill directory or its SKILL.md; a Problem when there is none. */
async function locate(path: string): Promise<{ dir: string; file: string } | Problem> {
  const found = await probe(path);
  if (found.kind === "missing") return { code: "path_missing", message: `${path} does not exist` };
  if (found.kind === "problem") return found.problem;
  if (!found.stats.isDirectory()) {
    if (!SKILL_FILE_NAMES.includes(basename(path))) {
      return { code: "not_skill_path", message: `${path} is neither a skill directory nor a SKILL.md file` };
    }
    return { dir: dirname(path), file: path };
  }
  for (const name of SKILL_FILE_NAMES) {
    const candidate = join(path, name);
    const probed = await probe(candidate);
    if (probed.kind === "found") return { dir: path, file: candidate };
    if (probed.kind === "problem") return probed.problem;
  }
  return { code: "missing_skill_md", message: `${path} has no SKILL.md` };
}

/**
 * Validates one skill directory or SKILL.md (S-3, S-4). `strict` turns unknown fields into errors,
 * matching skills-ref's verdicts. The directory name checked against `name` is the path as given
 * (a link's own name). Never throws for bad input.
 */
export async function validateSkillPath(path: string, options: { strict: boolean }): Promise<SkillValidation> {
  const located = await locate(path);
  if ("code" in located) return invalid(located.code, located.message);
  const file = await readBoundedFile(located.file, MAX_SKILL_FILE_BYTES);
  if (isProblem(file)) return invalid(file.code, file.message);
  if (file.truncated) {
    return invalid("file_too_large", `${located.file} is ${file.size} bytes; the limit is MAX_SKILL_FILE_BYTES = ${MAX_SKILL_FILE_BYTES}`);
  }
  const text = decodeUtf8(file.bytes);
  if (text === undefined) return invalid("invalid_utf8", `${located.file} is not valid UTF-8`);
  const parsed = parseSkillDocument(text);
  if (parsed.fields === undefined) return { valid: false, errors: [...parsed.problems], warnings: [] };
  const checked = validateSkillFields(parsed.fields, basename(located.dir), options);
  return { valid: checked.errors.length === 0, errors: checked.errors, warnings: checked.warnings };
}
