import { AppError } from "../errors/index.js";
import { checkGuard, readPinnedDocument } from "./pinning.js";
import type { PathGuard, SkillEntry } from "./types.js";

/** Arguments as a command received them: raw text, or named values (C-3). */
export type ActivationArguments = string | Readonly<Record<string, string>>;

/** What activating a skill returns to its caller (C-5); `instructions` is the SKILL.md body read at call time. */
export interface Activation {
  readonly name: string;
  readonly description: string;
  readonly source: string;
  readonly arguments: ActivationArguments;
  readonly instructions: string;
}

/** A skill a person activated with a slash command (C-6): the command's name and the activation it prepared. */
export interface SlashActivation {
  readonly command: string;
  readonly activation: Activation;
}

/**
 * The model's view of a slash activation: one JSON object, so nothing in the instructions can
 * end the block early or pose as the runtime; arguments are passed exactly as the skill received them.
 */
export function activationBlock({ command, activation }: SlashActivation): string {
  return JSON.stringify({
    skill_activation: {
      command,
      name: activation.name,
      source: activation.source,
      arguments: activation.arguments,
      instructions: activation.instructions,
    },
  });
}

/**
 * Builds the activation payload of a skill (C-5, C-6) after checking its pins; reads only
 * SKILL.md and runs nothing. Throws AppError "invalid_params" for arguments that are neither
 * a string nor a string-to-string mapping, and whatever checkPinned throws.
 */
export async function prepareActivation(entry: SkillEntry, args: ActivationArguments, guard?: PathGuard): Promise<Activation> {
  const copied = copyArguments(args);
  checkGuard(entry, guard);
  const document = await readPinnedDocument(entry);
  return Object.freeze({
    name: entry.name,
    description: entry.description,
    source: entry.source,
    arguments: copied,
    instructions: document.body,
  });
}

/** Validates at the boundary and copies, so a later change by the caller cannot alter a stored activation. */
function copyArguments(args: unknown): ActivationArguments {
  if (typeof args === "string") return args;
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    throw new AppError("invalid_params", `skill arguments must be a string or a mapping of strings, got ${args === null ? "null" : typeof args}`);
  }
  const copy: Record<string, string> = {};
  for (const [key, value] of Object.entries(args)) {
    if (typeof value !== "string") throw new AppError("invalid_params", `skill argument "${key}" must be a string, got ${typeof value}`);
    copy[key] = value;
  }
  return Object.freeze(copy);
}
