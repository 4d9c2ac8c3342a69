/**
 * Visible pulls, loaded once (O-6): every activation in a conversation draws its own `skill` row,
 * and a skill whose text the model already has is not sent again.
 */
import type { SkillEntry } from "../skills/index.js";
import type { LoadedSkill } from "./conversation.js";
import { skillRow, type PullVia, type TranscriptRow } from "./rows.js";

/** What a second pull returns instead of the skill's text. */
export function alreadyLoadedNote(name: string): string {
  return `Skill ${name} is already loaded in this conversation: its instructions are earlier in your context. Follow them; do not load it again.`;
}

/** The skills loaded in one conversation; draws a row for each pull. */
export class PullLedger {
  private readonly loaded: Map<string, LoadedSkill>;

  constructor(initial: readonly LoadedSkill[], private readonly emit: (row: TranscriptRow) => void) {
    this.loaded = new Map(initial.map((skill) => [skill.name, skill]));
  }

  /** True when the model already has `name`'s text. */
  has(name: string): boolean {
    return this.loaded.has(name);
  }

  /**
   * Records one pull of `entry` via `via` and draws its row. `body` is the text the model is given
   * on a first pull. Returns whether the skill was loaded already (the caller then sends the note).
   */
  pull(entry: SkillEntry, via: PullVia, body: string): boolean {
    const already = this.loaded.has(entry.name);
    if (!already) this.loaded.set(entry.name, { name: entry.name, dir: entry.dir, resolved_dir: entry.resolvedDir, bytes: entry.size, body });
    this.emit(skillRow(entry.name, entry.size, via, already));
    return already;
  }

  /** The loaded skills, in load order. */
  list(): LoadedSkill[] {
    return [...this.loaded.values()];
  }
}
