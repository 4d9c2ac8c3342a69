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
    const length = sequenceLength(bytes, at);
    if (length === 0) return at;
    at += length;
  }
  return at;
}

/** Bytes of the well-formed sequence at `at`, or 0 when none starts there. */
function sequenceLength(bytes: Uint8Array, at: number): number {
  const lead = bytes[at]!;
  if (lead < 0x80) return 1;
  const [length, low, high] = lead >= 0xc2 && lead <= 0xdf ? [2, 0x80, 0xbf]
    : lead === 0xe0 ? [3, 0xa0, 0xbf]
    : lead === 0xed ? [3, 0x80, 0x9f]
    : lead >= 0xe1 && lead <= 0xef ? [3, 0x80, 0xbf]
    : lead === 0xf0 ? [4, 0x90, 0xbf]
    : lead >= 0xf1 && lead <= 0xf3 ? [4, 0x80, 0xbf]
    : lead === 0xf4 ? [4, 0x80, 0x8f]
    : [0, 0, 0];
  if (length === 0 || at + length > bytes.length) return 0;
  const second = bytes[at + 1]!;
  if (second < low || second > high) return 0;
  for (let next = at + 2; next < at + length; next += 1) if ((bytes[next]! & 0xc0) !== 0x80) return 0;
  return length;
}
