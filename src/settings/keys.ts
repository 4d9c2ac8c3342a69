/**
 * Every key a settings file may hold, read off the schema itself, so `albedo help settings` (and
 * whatever else lists them) cannot fall behind it: a section's fields as `section.field`, a
 * top-level value as its name, each with the kind of value it takes.
 */
import type { z } from "zod";
import { isGlobalOnly } from "./globalOnly.js";
import { SETTINGS_SCHEMAS } from "./schema.js";

export interface SettingsKey {
  /** Dotted: `kernel.pool`, `sandbox`. */
  readonly key: string;
  /** What it takes, in a few words: `on, off`, `true or false`, `integer`, `list`, `object`. */
  readonly takes: string;
  /** Read from the global file only (a project file's value is ignored, a write there refused). */
  readonly globalOnly: boolean;
}

type Schema = z.core.$ZodType;

/** The schema under optional and nullable wrappers. */
function unwrapped(schema: Schema): Schema {
  let inner = schema;
  while (inner._zod.def.type === "optional" || inner._zod.def.type === "nullable") inner = (inner._zod.def as unknown as { innerType: Schema }).innerType;
  return inner;
}

/** What a leaf takes, in a few words. */
function takes(schema: Schema): string {
  const def = unwrapped(schema)._zod.def as { type: string; entries?: Record<string, string> };
  switch (def.type) {
    case "enum":
      return Object.values(def.entries ?? {}).join(", ");
    case "boolean":
      return "true or false";
    case "number":
      return "integer";
    case "string":
      return "text";
    case "array":
      return "list";
    default:
      return "object";
  }
}

/** Every key of the global scope's schema (the widest: it alone takes skills.default and python.packages), in the schema's order. */
export function settingsKeys(): SettingsKey[] {
  const keys: SettingsKey[] = [];
  for (const [name, schema] of Object.entries(SETTINGS_SCHEMAS.global.shape)) {
    const inner = unwrapped(schema);
    const fields = inner._zod.def.type === "object" ? (inner as unknown as { shape: Record<string, Schema> }).shape : undefined;
    if (fields === undefined) keys.push({ key: name, takes: takes(inner), globalOnly: isGlobalOnly(name) });
    else for (const [field, value] of Object.entries(fields)) keys.push({ key: `${name}.${field}`, takes: takes(value), globalOnly: isGlobalOnly(`${name}.${field}`) });
  }
  return keys;
}
