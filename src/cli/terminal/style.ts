/** ANSI SGR codes the CLI uses; a handful, so that output stays legible on any palette. */
const CODES = { bold: [1, 22], dim: [2, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], cyan: [36, 39] } as const;

export type StyleName = keyof typeof CODES;

/** Wraps text in one colour or weight, or returns it unchanged when colour is off. */
export type Style = { readonly [K in StyleName]: (text: string) => string } & { readonly on: boolean };

/**
 * Whether to colour what goes to `stream`: only on a terminal, never when NO_COLOR is set to
 * anything non-empty (no-color.org) or TERM is "dumb"; FORCE_COLOR (non-empty, not "0") forces it.
 */
export function colourWanted(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "" && env.FORCE_COLOR !== "0") return true;
  return stream.isTTY === true && env.TERM !== "dumb";
}

/** The style for one stream. */
export function styleFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): Style {
  const on = colourWanted(stream, env);
  const entries = Object.entries(CODES).map(([name, [open, close]]) => [name, on ? (text: string) => `\u001b[${open}m${text}\u001b[${close}m` : (text: string) => text]);
  return { ...(Object.fromEntries(entries) as { [K in StyleName]: (text: string) => string }), on };
}
