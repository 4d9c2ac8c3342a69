/**
 * Server-sent events cut apart before an SDK reads them. Both SDKs join each network piece onto
 * everything not yet parsed and search it again from its start, so one event (or one line) that
 * never ends costs time quadratic in its size, on the daemon's only thread. This transform finds
 * each event's end once, in the bytes that just came, hands the SDK one whole event per piece
 * (its own search then always starts on an empty buffer), and fails the body once one event
 * passes its bound.
 */

/** One event (and so one line of it) passed its bound; the stream reading the body fails with this. */
export class SseEventTooLargeError extends Error {
  override readonly name = "SseEventTooLargeError";
  constructor(readonly maxBytes: number) {
    super(`server-sent event over ${maxBytes} bytes`);
  }
}

const LF = 0x0a;
const CR = 0x0d;
/** Bytes an event's end (`\r\n\r\n`) spans, less one: how much of the last piece a search must look back over. */
const LOOKBACK = 3;

/**
 * The index after the first event end in `bytes` at or after `from`, as the SDKs find it
 * (`\n\n`, `\r\r` or `\r\n\r\n`), or -1 when there is none yet.
 */
export function eventEnd(bytes: Uint8Array, from = 0): number {
  for (let i = from; i < bytes.length - 1; i += 1) {
    const byte = bytes[i];
    if (byte !== LF && byte !== CR) continue;
    const next = bytes[i + 1];
    if (byte === next) return i + 2;
    if (byte === CR && next === LF && i + 3 < bytes.length && bytes[i + 2] === CR && bytes[i + 3] === LF) return i + 4;
  }
  return -1;
}

/** Re-cuts an event stream into whole events of at most `maxBytes` each; the last one may lack its end. */
export function sseEvents(maxBytes: number): TransformStream<Uint8Array, Uint8Array> {
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  // The last bytes of the pending event: an event's end may straddle two pieces.
  let tail = new Uint8Array(0);
  const take = (piece: Uint8Array): Uint8Array => {
    const event = Buffer.concat([...pending, piece], pendingBytes + piece.byteLength);
    pending = [];
    pendingBytes = 0;
    tail = new Uint8Array(0);
    return event;
  };
  return new TransformStream({
    transform(chunk, controller) {
      let rest = chunk;
      for (;;) {
        const window = tail.byteLength === 0 ? rest : Buffer.concat([tail, rest]);
        const end = eventEnd(window);
        const cut = end - tail.byteLength;
        const size = pendingBytes + (end === -1 ? rest.byteLength : cut);
        if (size > maxBytes) return controller.error(new SseEventTooLargeError(maxBytes));
        if (end === -1) {
          pending.push(rest);
          pendingBytes += rest.byteLength;
          tail = window.slice(Math.max(0, window.byteLength - LOOKBACK));
          return;
        }
        controller.enqueue(take(rest.subarray(0, cut)));
        rest = rest.subarray(cut);
        if (rest.byteLength === 0) return;
      }
    },
    flush(controller) {
      if (pendingBytes > 0) controller.enqueue(take(new Uint8Array(0)));
    },
  });
}
