import type { Settings, SkillsSettings } from "./schema.js";

/** Which scope settled a skill's enablement; "default" means no scope named it. */
export type DecidingScope = "session" | "project" | "global" | "default";

export interface Enablement {
  readonly enabled: boolean;
  readonly decidedBy: DecidingScope;
}

/** The three scopes' settings; an absent scope names nothing. */
export interface ScopedSettings {
  readonly global?: Settings;
  readonly project?: Settings;
  readonly session?: Settings;
}

/** Enablement when nothing names a skill and the global file sets no default. */
export const DEFAULT_SKILL_SWITCH = "on";

/**
 * Whether skill `name` is enabled (D-4): the narrowest scope naming it decides (session, then
 * project, then global); otherwise the global `skills.default`, "on" unless set.
 */
export function effectiveEnablement(name: string, scopes: ScopedSettings): Enablement {
  const key = name.normalize("NFKC");
  for (const scope of ["session", "project", "global"] as const) {
    const verdict = verdictIn(scopes[scope]?.skills, key);
    if (verdict !== undefined) return { enabled: verdict, decidedBy: scope };
  }
  return { enabled: (scopes.global?.skills?.default ?? DEFAULT_SKILL_SWITCH) === "on", decidedBy: "default" };
}

/** A scope's verdict on one name: off wins should a list ever hold it in both (the schema forbids that). */
function verdictIn(skills: SkillsSettings | undefined, key: string): boolean | undefined {
  if (!skills) return undefined;
  if (skills.off?.some((item) => item.normalize("NFKC") === key)) return false;
  if (skills.on?.some((item) => item.normalize("NFKC") === key)) return true;
  return undefined;
}
