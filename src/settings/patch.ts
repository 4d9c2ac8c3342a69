import { AppError } from "../errors/index.js";
import { skillNameProblem, type Settings } from "./schema.js";

/** A change to one scope's skill lists: names to turn on, to turn off, or to stop naming. */
export interface SkillsPatch {
  readonly on?: readonly string[];
  readonly off?: readonly string[];
  readonly clear?: readonly string[];
}

/**
 * Returns a copy of `settings` with each name moved to the list the patch asks for (out of the
 * other), or out of both for `clear`; an empty list, and a `skills` section left empty, go (a
 * cleared name leaves no `{"on": []}` behind); other fields are untouched. Throws AppError
 * "invalid_params" when a name is not a valid skill name or appears in two parts of the patch.
 */
export function patchSkills(settings: Settings, patch: SkillsPatch): Settings {
  checkPatch(patch);
  const on = [...(settings.skills?.on ?? [])];
  const off = [...(settings.skills?.off ?? [])];
  const drop = (list: string[], name: string): void => {
    for (let index = list.indexOf(name); index >= 0; index = list.indexOf(name)) list.splice(index, 1);
  };
  for (const name of patch.clear ?? []) {
    drop(on, name);
    drop(off, name);
  }
  for (const name of patch.on ?? []) {
    drop(off, name);
    if (!on.includes(name)) on.push(name);
  }
  for (const name of patch.off ?? []) {
    drop(on, name);
    if (!off.includes(name)) off.push(name);
  }
  const skills: Record<string, unknown> = { ...settings.skills };
  setList(skills, "on", on);
  setList(skills, "off", off);
  // Spread first so that the section keeps its place among the file's keys.
  const next: Record<string, unknown> = { ...settings, skills };
  if (Object.keys(skills).length === 0) delete next.skills;
  return next as Settings;
}

/** An empty list says nothing: it is left out. */
function setList(skills: Record<string, unknown>, key: "on" | "off", list: string[]): void {
  if (list.length > 0) skills[key] = list;
  else delete skills[key];
}

function checkPatch(patch: SkillsPatch): void {
  const seen = new Map<string, string>();
  for (const part of ["on", "off", "clear"] as const) {
    for (const name of patch[part] ?? []) {
      const problem = skillNameProblem(name);
      if (problem) throw new AppError("invalid_params", `skills.${part}: ${problem}`, { part, name });
      const earlier = seen.get(name);
      if (earlier !== undefined && earlier !== part) {
        throw new AppError("invalid_params", `"${name}" appears in both ${earlier} and ${part} of the patch`, { name });
      }
      seen.set(name, part);
    }
  }
}
