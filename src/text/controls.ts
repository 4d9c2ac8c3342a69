/**
 * Characters a terminal may act on: C0 controls, DEL and C1 controls (U+009B alone starts a CSI
 * sequence), and the bidirectional controls (the Arabic letter mark U+061C, the marks U+200E and
 * U+200F, the embeddings and overrides U+202A–U+202E, the isolates U+2066–U+2069), with which
 * text can show in another order than it reads ("Trojan Source").
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** The characters of CONTROL that JSON.stringify leaves raw: all but C0. */
// eslint-disable-next-line no-control-regex
const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** Unicode's picture for a C0 control is this plus its code (ESC → ␛); DEL has its own. */
const C0_PICTURES = 0x2400;
const DEL_PICTURE = "\u2421";

/**
 * `text` with every control character replaced by something visible, so that text from files
 * (skill names, descriptions, directory names) can be shown to a person or a model without a
 * terminal acting on it: C0 controls as their control pictures (ESC → ␛, BEL → ␇, newline → ␊),
 * DEL as ␡, C1 and bidirectional controls, which have no pictures, as `\u009b`, `\u202e`...
 * text. Characters in `keep` (say "\n" for multi-line text whose lines a layout needs) pass through.
 */
export function visibleControls(text: string, keep = ""): string {
  return text.replace(CONTROL, (char) => {
    if (keep.includes(char)) return char;
    const code = char.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(C0_PICTURES + code);
    if (code === 0x7f) return DEL_PICTURE;
    return `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** JSON text with DEL, the C1 and the bidirectional controls written as `\u` escapes; JSON.stringify escapes only C0. Parses to the same value. */
export function jsonWithoutControls(json: string): string {
  // Outside strings JSON has no such characters, so every match is inside one, where an escape means the same.
  return json.replace(RAW_IN_JSON, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Terminal escape sequences: CSI (colours, cursor moves), OSC (titles, links) and the two-character ones. */
// eslint-disable-next-line no-control-regex
const ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]|\u009b[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

/** `text` without terminal escape sequences (IPython colours its tracebacks), for readers that are not terminals. */
export function stripAnsi(text: string): string {
  return text.replace(ESCAPES, "");
}
