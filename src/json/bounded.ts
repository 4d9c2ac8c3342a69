/**
 * Cutting a JSON value down to a byte budget, for data a peer sends that the runtime keeps or
 * forwards (a kernel's outputs, stream events). Sizes are UTF-8 bytes of the value's JSON text.
 * Whatever is cut says so in place: a cut string ends with a marker line, a cut array ends with a
 * marker element, each naming how much went.
 */

/** Nesting levels a bounded value keeps; a deeper part is replaced by a marker, so no consumer recurses without end. */
export const MAX_BOUNDED_DEPTH = 64;
/** The smallest budget boundJson takes: room for a marker and some text. */
export const MIN_BOUND_BYTES = 1024;
/** An array item that does not fit whole is cut only when this much room is left; otherwise it and the rest are dropped. */
const MIN_CUT_BYTES = 256;
/** An object value is kept (whole or cut) only when this much room is left for it; `null` and `""` fit. */
const MIN_VALUE_BYTES = 8;
/** Slack for a marker whose number got longer than the one it was sized with ("999 B" against "1.0 KB"). */
const MARKER_SLACK_BYTES = 16;
/** Rounds of shortening a string prefix whose escapes made it longer than it looked. */
const MAX_PREFIX_ROUNDS = 40;

/** The text that stands where `droppedBytes` bytes were cut away; it names the bound that was passed. */
export type DropMarker = (droppedBytes: number) => string;

/** What boundJson made of a value. */
export interface BoundedJson<T> {
  /** The value itself when it fit, else a cut copy (the input is never changed). */
  readonly value: T;
  /** UTF-8 bytes of `value` as JSON. */
  readonly bytes: number;
  /** About how many bytes were cut away (UTF-8 of what went); 0 when the value fit. */
  readonly droppedBytes: number;
}

/** UTF-8 bytes of `value` as JSON text. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? "null");
}

/**
 * `value` as it is when its JSON takes at most `maxBytes` bytes and nests at most
 * MAX_BOUNDED_DEPTH levels; otherwise a copy cut to fit, with markers from `marker`. The work
 * done is about the size of the value (nothing larger is built). Throws RangeError when
 * `maxBytes` is below MIN_BOUND_BYTES.
 */
export function boundJson<T>(value: T, maxBytes: number, marker: DropMarker): BoundedJson<T> {
  if (!(maxBytes >= MIN_BOUND_BYTES)) throw new RangeError(`boundJson needs at least MIN_BOUND_BYTES (${MIN_BOUND_BYTES}) bytes, got ${maxBytes}`);
  const size = measure(value, maxBytes, 0);
  if (size <= maxBytes) return { value, bytes: size, droppedBytes: 0 };
  const cutter = new Cutter(marker);
  const fitted = cutter.fit(value, maxBytes, 0);
  return { value: fitted.value as T, bytes: fitted.bytes, droppedBytes: cutter.dropped };
}

interface Fitted {
  readonly value: unknown;
  readonly bytes: number;
}

/**
 * JSON bytes of `value` when they are at most `limit`; otherwise some number above `limit`, found
 * without serialising more than `limit` bytes of any string. Parts deeper than MAX_BOUNDED_DEPTH
 * count as too large.
 */
function measure(value: unknown, limit: number, depth: number): number {
  if (typeof value === "string") {
    // Escapes only add bytes, so the UTF-8 length is a lower bound that rules out huge strings cheaply.
    const utf8 = Buffer.byteLength(value) + 2;
    return utf8 > limit ? utf8 : jsonBytes(value);
  }
  if (value === null || typeof value !== "object") return jsonBytes(value);
  if (depth >= MAX_BOUNDED_DEPTH) return Number.POSITIVE_INFINITY;
  let total = 1;
  if (Array.isArray(value)) {
    for (const item of value) {
      total += measure(item, limit - total, depth + 1) + 1;
      if (total > limit) return total;
    }
    return Math.max(total, 2);
  }
  for (const [key, item] of entriesOf(value)) {
    total += measure(key, limit - total, depth + 1) + 1 + measure(item, limit - total, depth + 1) + 1;
    if (total > limit) return total;
  }
  return Math.max(total, 2);
}

/** About how many UTF-8 bytes `value` takes as JSON, at any depth; walks without recursion, for the markers' numbers. */
function roughBytes(value: unknown): number {
  let total = 0;
  const stack: object[] = [];
  const add = (item: unknown): void => {
    if (typeof item === "string") total += Buffer.byteLength(item) + 2;
    else if (item === null || typeof item !== "object") total += jsonBytes(item);
    else stack.push(item);
  };
  add(value);
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const items = Array.isArray(next) ? (next as unknown[]) : entriesOf(next).map(([key, item]) => ((total += Buffer.byteLength(key) + 3), item));
    total += 1 + Math.max(items.length, 1);
    for (const item of items) add(item);
  }
  return total;
}

/** An object's entries as JSON.stringify writes them (undefined values leave the key out). */
function entriesOf(value: object): [string, unknown][] {
  return Object.entries(value).filter(([, item]) => item !== undefined && typeof item !== "function");
}

/** One cut: fits values into shares of the budget and adds up what it drops. */
class Cutter {
  dropped = 0;

  constructor(private readonly marker: DropMarker) {}

  /** `value` in at most `budget` (≥ MIN_VALUE_BYTES) bytes. */
  fit(value: unknown, budget: number, depth: number): Fitted {
    const size = measure(value, budget, depth);
    if (size <= budget) return { value, bytes: size };
    if (typeof value === "string") return this.cutString(value, budget);
    if (value === null || typeof value !== "object") return this.drop(value, { value: null, bytes: 4 });
    if (depth >= MAX_BOUNDED_DEPTH) return this.replace(value, budget);
    return Array.isArray(value) ? this.cutArray(value, budget, depth) : this.cutObject(value, budget, depth);
  }

  /** The longest prefix that fits with its marker line, or `""` when not even the marker does. */
  private cutString(text: string, budget: number): Fitted {
    const total = Buffer.byteLength(text);
    const room = budget - 2 - (jsonBytes(`\n${this.marker(total)}\n`) - 2) - MARKER_SLACK_BYTES;
    if (room < 0) {
      this.dropped += total;
      return { value: "", bytes: 2 };
    }
    const prefix = longestPrefix(text, room);
    const dropped = total - Buffer.byteLength(prefix);
    const json = JSON.stringify(`${prefix}${prefix === "" || prefix.endsWith("\n") ? "" : "\n"}${this.marker(dropped)}\n`);
    const bytes = Buffer.byteLength(json);
    if (bytes > budget) return this.drop(text, { value: "", bytes: 2 });
    this.dropped += dropped;
    // A fresh copy: V8 may keep a prefix as a slice of `text`, which would keep all of `text` alive.
    return { value: JSON.parse(json) as string, bytes };
  }

  /** Items in order while they fit whole; the first that does not is cut when room is left, the rest dropped behind one marker item. */
  private cutArray(items: readonly unknown[], budget: number, depth: number): Fitted {
    const reserve = jsonBytes(this.marker(roughBytes(items))) + 1 + MARKER_SLACK_BYTES;
    const kept: unknown[] = [];
    let used = 2;
    let index = 0;
    for (; index < items.length; index += 1) {
      const comma = kept.length > 0 ? 1 : 0;
      const room = budget - reserve - used - comma;
      if (room < 2) break;
      const item = items[index];
      const size = measure(item, room, depth + 1);
      if (size <= room) {
        kept.push(item);
        used += comma + size;
        continue;
      }
      const cuttable = typeof item === "string" || (typeof item === "object" && item !== null);
      if (cuttable && room >= MIN_CUT_BYTES) {
        const fitted = this.fit(item, room, depth + 1);
        kept.push(fitted.value);
        used += comma + fitted.bytes;
        index += 1;
      }
      break;
    }
    if (index < items.length) used = this.markRest(items.slice(index), kept, used, budget);
    return { value: kept, bytes: used };
  }

  /** Drops `rest` and, when it fits, appends one marker item for it; returns the bytes used. */
  private markRest(rest: readonly unknown[], kept: unknown[], used: number, budget: number): number {
    const dropped = roughBytes(rest);
    this.dropped += dropped;
    const note = this.marker(dropped);
    const cost = (kept.length > 0 ? 1 : 0) + jsonBytes(note);
    if (used + cost > budget) return used;
    kept.push(note);
    return used + cost;
  }

  /**
   * Shares the budget among the entries, smallest first: each gets an equal share of what is left,
   * so small fields (names, metadata) stay whole and the large ones are cut alike. An entry whose
   * key leaves no room for a value is dropped. Keys keep their order.
   */
  private cutObject(value: object, budget: number, depth: number): Fitted {
    const entries = entriesOf(value).map(([key, item], order) => {
      const keyCost = measure(key, budget, depth + 1) + 2;
      return { order, key, item, keyCost, size: measure(item, budget, depth + 1) };
    });
    const kept: { order: number; key: string; item: unknown }[] = [];
    let remaining = budget - 1;
    let left = entries.length;
    for (const entry of [...entries].sort((a, b) => a.keyCost + a.size - (b.keyCost + b.size))) {
      const share = Math.floor(remaining / left);
      left -= 1;
      const room = share - entry.keyCost;
      if (entry.size <= room) {
        kept.push(entry);
        remaining -= entry.keyCost + entry.size;
      } else if (room >= MIN_VALUE_BYTES) {
        const fitted = this.fit(entry.item, room, depth + 1);
        kept.push({ ...entry, item: fitted.value });
        remaining -= entry.keyCost + fitted.bytes;
      } else {
        this.dropped += roughBytes(entry.key) + roughBytes(entry.item);
      }
    }
    kept.sort((a, b) => a.order - b.order);
    const result = Object.fromEntries(kept.map((entry) => [entry.key, entry.item]));
    return { value: result, bytes: jsonBytes(result) };
  }

  /** A part nested too deep: a marker string in its place when it fits, else null. */
  private replace(value: object, budget: number): Fitted {
    const dropped = roughBytes(value);
    this.dropped += dropped;
    const note = this.marker(dropped);
    const bytes = jsonBytes(note);
    return bytes <= budget ? { value: note, bytes } : { value: null, bytes: 4 };
  }

  private drop(value: unknown, instead: Fitted): Fitted {
    this.dropped += roughBytes(value);
    return instead;
  }
}

/** The longest prefix of `text` (not splitting a surrogate pair) whose JSON, quotes aside, takes at most `room` bytes. */
function longestPrefix(text: string, room: number): string {
  let length = Math.min(text.length, room);
  for (let round = 0; round < MAX_PREFIX_ROUNDS && length > 0; round += 1) {
    if (isHighSurrogate(text.charCodeAt(length - 1))) length -= 1;
    const size = jsonBytes(text.slice(0, length)) - 2;
    if (size <= room) return text.slice(0, length);
    length = Math.floor((length * room) / size);
  }
  return "";
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
