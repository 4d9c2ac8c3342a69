/**
 * The certificates the proxy trusts when it speaks TLS to an intercepted host itself (N-3): the
 * system's store plus the policy's `upstream_ca`. Every other host's TLS is the client's own
 * business; the proxy only tunnels it.
 */
import { rootCertificates, createSecureContext, type SecureContext } from "node:tls";
import { stat } from "node:fs/promises";
import { readFileBounded } from "../platform/index.js";
import { MAX_PEM_FILE_BYTES } from "./limits.js";

/** Debian's and Ubuntu's bundle of the system's CAs (admin-added ones included); Node's own Mozilla list where it is missing. */
export const SYSTEM_CA_FILE = "/etc/ssl/certs/ca-certificates.crt";

const CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** A PEM file that cannot serve as trusted certificates; the message names the file and why. */
export class TrustFileError extends Error {
  override readonly name = "TrustFileError";
}

/** The PEM certificate blocks in a file; throws TrustFileError naming the file when it cannot be read or holds none. */
export async function readCertificates(path: string, what: string): Promise<string[]> {
  let read;
  try {
    read = await readFileBounded(path, MAX_PEM_FILE_BYTES);
  } catch (error) {
    throw new TrustFileError(`${what} ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  if (read.kind === "oversize") throw new TrustFileError(`${what} ${path} is over ${MAX_PEM_FILE_BYTES} bytes (MAX_PEM_FILE_BYTES)`);
  if (read.kind === "not_regular_file") throw new TrustFileError(`${what} ${path} is ${read.what}, not a PEM file`);
  const blocks = read.bytes.toString("latin1").match(CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new TrustFileError(`${what} ${path} holds no PEM certificate`);
  return blocks;
}

let system: Promise<readonly string[]> | undefined;

/** The system's trusted CAs as PEM blocks, read once per process. */
export function systemRoots(): Promise<readonly string[]> {
  system ??= readCertificates(SYSTEM_CA_FILE, "the system CA bundle").catch(() => [...rootCertificates]);
  return system;
}

let cached: { key: string; context: Promise<SecureContext> } | undefined;

/** A TLS client context trusting the system's CAs and `upstreamCa`'s, rebuilt only when that file changes; throws TrustFileError. */
export async function upstreamTrust(upstreamCa: string | undefined): Promise<SecureContext> {
  let key = "system";
  if (upstreamCa !== undefined) {
    const info = await stat(upstreamCa).catch(() => undefined);
    key = `${upstreamCa}\0${info?.mtimeMs ?? "missing"}\0${info?.size ?? 0}`;
  }
  if (cached?.key !== key) {
    const context = (async () => {
      const extra = upstreamCa === undefined ? [] : await readCertificates(upstreamCa, "network.upstream_ca");
      return createSecureContext({ ca: [...(await systemRoots()), ...extra] });
    })();
    cached = { key, context };
    // A failed build is not kept: the next request reads the file again.
    context.catch(() => {
      if (cached?.context === context) cached = undefined;
    });
  }
  return cached.context;
}
