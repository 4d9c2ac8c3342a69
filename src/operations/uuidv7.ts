import { randomBytes } from "node:crypto";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
/** Largest Unix time (ms) a UUIDv7's 48-bit field holds. */
const MAX_UUID_V7_TIME_MS = 2 ** 48 - 1;

/** A new RFC 9562 UUIDv7 (lowercase): `nowMs` in the top 48 bits, version 7, variant 10, 74 random bits. */
export function newOperationId(nowMs: number = Date.now()): string {
  if (!Number.isSafeInteger(nowMs) || nowMs < 0 || nowMs > MAX_UUID_V7_TIME_MS) throw new RangeError(`UUIDv7 time out of range: ${nowMs}`);
  const bytes = randomBytes(16);
  bytes.writeUIntBE(nowMs, 0, 6);
  bytes[6] = 0x70 | (bytes[6]! & 0x0f);
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The Unix time (ms) embedded in a UUIDv7, or undefined when `id` is not a UUIDv7 with the RFC 9562 variant. */
export function parseUuidV7(id: string): number | undefined {
  if (!UUID_V7.test(id)) return undefined;
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}
