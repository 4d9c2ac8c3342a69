/** The tool filter of a server entry (M-1): glob patterns over tool names, `*` any run of characters, `?` one; deny wins. */
import type { McpToolFilter } from "./section.js";

/** Decides whether a tool name may be listed and called. */
export interface ToolPolicy {
  /** True when `tool` is allowed (matched by allow, or allow is absent) and no deny pattern matches it. */
  allows(tool: string): boolean;
}

/** The policy of one entry's `tools` field; absent allows every tool. */
export function toolPolicy(filter: McpToolFilter | undefined): ToolPolicy {
  const allow = filter?.allow;
  const deny = filter?.deny ?? [];
  return {
    allows: (tool) => !deny.some((glob) => globMatches(glob, tool)) && (allow === undefined || allow.some((glob) => globMatches(glob, tool))),
  };
}

/**
 * Whether `glob` matches all of `text`. Iterative, going back only to the last `*`, so the work is
 * at most the product of the two lengths whatever the pattern (a regular expression of many `*`
 * can backtrack exponentially).
 */
export function globMatches(glob: string, text: string): boolean {
  const pattern = [...glob];
  const chars = [...text];
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < chars.length) {
    if (p < pattern.length && (pattern[p] === "?" || (pattern[p] !== "*" && pattern[p] === chars[t]))) {
      p += 1;
      t += 1;
    } else if (p < pattern.length && pattern[p] === "*") {
      star = p++;
      resume = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === "*") p += 1;
  return p === pattern.length;
}
