/** HMAC-SHA256 message signing as the Jupyter wire protocol defines it (K-2). */
import { createHmac, timingSafeEqual } from "node:crypto";

export interface Signer {
  /** Hex HMAC of the four signed frames: header, parent header, metadata, content. */
  sign(frames: readonly Buffer[]): string;
  /** True when `signature` matches `frames`; compares in constant time. */
  verify(signature: Buffer, frames: readonly Buffer[]): boolean;
}

/** A signer for one kernel's key; throws on an empty key (every kernel gets a random one). */
export function createSigner(key: string): Signer {
  if (key.length === 0) throw new Error("a kernel connection needs a non-empty signing key");
  const sign = (frames: readonly Buffer[]): string => {
    const hmac = createHmac("sha256", key);
    for (const frame of frames) hmac.update(frame);
    return hmac.digest("hex");
  };
  return {
    sign,
    verify(signature, frames) {
      const expected = Buffer.from(sign(frames), "ascii");
      return signature.length === expected.length && timingSafeEqual(signature, expected);
    },
  };
}
