import type { readSettings } from "../../src/settings/index.js";
import type { discoverEverything } from "../../src/skills/index.js";

/** What a test counts of the runtime's file work: walks of the skill files and reads of settings files. */
export interface FileCounts {
  walks: number;
  /** SKILL.md files those walks parsed rather than took from their owner's parse cache. */
  parses: number;
  /** Walks running right now, and the most that ever ran at once. */
  walking: number;
  mostWalking: number;
  /** The settings files read, one entry per read. */
  reads: string[];
}

/** The one set of counters the mocked modules below report to (module state: one per test file). */
export const fileCounts: FileCounts = { walks: 0, parses: 0, walking: 0, mostWalking: 0, reads: [] };

/** Zeroes the counters. */
export function resetFileCounts(): void {
  Object.assign(fileCounts, { walks: 0, parses: 0, walking: 0, mostWalking: 0, reads: [] });
}

/**
 * The skills module with `discoverEverything` counted: every walk of skill and instruction files
 * goes through it. For `vi.mock("…/src/skills/index.js", async (original) => countingSkills(await original()))`.
 */
export function countingSkills<M extends { readonly discoverEverything: typeof discoverEverything }>(actual: M): M {
  return {
    ...actual,
    discoverEverything: async (options, cache) => {
      fileCounts.walks += 1;
      fileCounts.walking += 1;
      fileCounts.mostWalking = Math.max(fileCounts.mostWalking, fileCounts.walking);
      const parsed = cache?.parses ?? 0;
      try {
        return await actual.discoverEverything(options, cache);
      } finally {
        fileCounts.walking -= 1;
        fileCounts.parses += (cache?.parses ?? 0) - parsed;
      }
    },
  };
}

/** The settings module with `readSettings` counted per file; used like countingSkills. */
export function countingSettings<M extends { readonly readSettings: typeof readSettings }>(actual: M): M {
  return {
    ...actual,
    readSettings: (target) => {
      fileCounts.reads.push(target.file);
      return actual.readSettings(target);
    },
  };
}
