/** Strict UTF-8 decoding that says where bytes stop being UTF-8, for input a peer sent. */

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Decodes `bytes` as strict UTF-8 (a BOM is kept as text); undefined when they are not UTF-8, without looking for where. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The text, or the offset of the first byte that does not begin a well-formed UTF-8 sequence. */
export type Utf8Decoded = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly offset: number };

/** Decodes `bytes` as UTF-8, refusing what a lenient decoder would turn into U+FFFD (a BOM is kept as text). */
export function decodeUtf8Strict(bytes: Uint8Array): Utf8Decoded {
  const text = decodeUtf8(bytes);
  return text === undefined ? { ok: false, offset: firstInvalidUtf8(bytes) } : { ok: true, text };
}

/**
 * Where the first ill-formed sequence starts, per the Unicode table of well-formed UTF-8 (no
 * overlong forms, no surrogates, nothing past U+10FFFF, no cut-off sequence); `bytes.length`
 * when all of it is well formed.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let at = 0;
  while (at < bytes.length) {
    const length = utf8SequenceAt(bytes, at);
    if (length === 0) return at;
    at += length;
  }
  return at;
}

/**
 * Bytes of the well-formed UTF-8 sequence at `at`, or 0 when none starts there (the Unicode table
 * of well-formed byte sequences: no overlong forms, no surrogates, nothing past U+10FFFF).
 */
export function utf8SequenceAt(bytes: Uint8Array, at: number): number {
  const [length, low, high] = sequenceShape(bytes[at]!);
  if (length === 0 || at + length > bytes.length) return 0;
  return fits(bytes, at, length, low, high) ? length : 0;
}

/**
 * The length of `bytes` without the well-formed start of a sequence that their end cuts short, so
 * that a page ending there resumes exactly at that sequence; `bytes.length` when nothing is cut (an
 * ill-formed tail is left to the decoder to refuse). The one boundary rule of every bounded text read.
 */
export function completeUtf8Length(bytes: Uint8Array): number {
  for (let back = 1; back <= 3 && back <= bytes.length; back++) {
    const start = bytes.length - back;
    const [length, low, high] = sequenceShape(bytes[start]!);
    if (length > back && fits(bytes, start, back, low, high)) return start;
    if (length !== 0 && length <= back) break;
  }
  return bytes.length;
}

/** A lead byte's sequence: its length (0: not a lead) and the range of its second byte. */
function sequenceShape(lead: number): readonly [number, number, number] {
  if (lead < 0x80) return [1, 0, 0];
  if (lead >= 0xc2 && lead <= 0xdf) return [2, 0x80, 0xbf];
  if (lead === 0xe0) return [3, 0xa0, 0xbf];
  if (lead === 0xed) return [3, 0x80, 0x9f];
  if (lead >= 0xe1 && lead <= 0xef) return [3, 0x80, 0xbf];
  if (lead === 0xf0) return [4, 0x90, 0xbf];
  if (lead >= 0xf1 && lead <= 0xf3) return [4, 0x80, 0xbf];
  if (lead === 0xf4) return [4, 0x80, 0x8f];
  return [0, 0, 0];
}

/** Whether the `count` bytes at `at` (lead included) are what a sequence of that shape begins with. */
function fits(bytes: Uint8Array, at: number, count: number, low: number, high: number): boolean {
  if (count >= 2) {
    const second = bytes[at + 1]!;
    if (second < low || second > high) return false;
  }
  for (let next = at + 2; next < at + count; next += 1) if ((bytes[next]! & 0xc0) !== 0x80) return false;
  return true;
}
