/**
 * The local CA (N-3): made once in a directory the caller names (the state dir), its key in a
 * file only the user reads, its certificate and a bundle (the system's CAs plus it) beside it for
 * the sandbox to bind read-only and trust. It mints one leaf certificate per intercepted host,
 * kept in a bounded cache while valid.
 */
import { createPrivateKey, generateKeyPair, X509Certificate, type KeyObject } from "node:crypto";
import { chmod, link, lstat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { createSecureContext, type SecureContext } from "node:tls";
import { promisify } from "node:util";
import { PRIVATE_FILE_MODE, readFileBounded, writeFileAtomic } from "../platform/index.js";
import { caCertificate, leafCertificate } from "./certificates.js";
import { CA_VALIDITY_MS, CERTIFICATE_BACKDATE_MS, LEAF_RENEW_BEFORE_MS, LEAF_VALIDITY_MS, MAX_LEAF_CERTIFICATES, MAX_PEM_FILE_BYTES } from "./limits.js";
import { systemRoots } from "./trust.js";

/** The CA's key and certificate together: one file, so no reader ever pairs a key with another CA's certificate. */
export const CA_KEY_FILE = "network-ca-key.pem";
/** The CA's certificate alone. */
export const CA_CERT_FILE = "network-ca.pem";
/** The system's CAs plus the local CA: what SSL_CERT_FILE and friends name inside the sandbox. */
export const CA_BUNDLE_FILE = "network-ca-bundle.pem";
/** Mode of the certificate and the bundle: readable, as the sandbox binds them. */
const PUBLIC_FILE_MODE = 0o644;
const RSA_BITS = 2048;

/** The local CA could not be made or read; the message names the file. */
export class LocalCaError extends Error {
  override readonly name = "LocalCaError";
}

export interface LocalCa {
  /** The CA's certificate (PEM file). */
  readonly certPath: string;
  /** The system's CAs plus the local CA (PEM file), for the sandbox's SSL_CERT_FILE and friends. */
  readonly bundlePath: string;
  /** A TLS server context presenting a leaf for `host` (a canonical host name), minted on first use. */
  contextFor(host: string): Promise<SecureContext>;
}

const makeKeys = promisify(generateKeyPair);

/** Opens the CA in `dir`, making it (and the directory) when missing or expired; writes the bundle. Throws LocalCaError. */
export async function openLocalCa(dir: string): Promise<LocalCa> {
  const keyPath = join(dir, CA_KEY_FILE);
  let ca = await loadCa(keyPath);
  if (!ca || new Date(ca.cert.validTo).getTime() < Date.now() + LEAF_VALIDITY_MS) ca = await makeCa(keyPath, ca !== undefined);
  const certPath = join(dir, CA_CERT_FILE);
  const bundlePath = join(dir, CA_BUNDLE_FILE);
  await writeFileAtomic(certPath, ca.pem, PUBLIC_FILE_MODE);
  await writeFileAtomic(bundlePath, [...(await systemRoots()), ca.pem].map((pem) => pem.trim()).join("\n") + "\n", PUBLIC_FILE_MODE);
  return { certPath, bundlePath, contextFor: leafCache(ca) };
}

interface Ca {
  readonly key: KeyObject;
  readonly pem: string;
  readonly cert: X509Certificate;
}

/** The CA in `keyPath`, or undefined when the file is missing. A file of another owner or that does not hold a CA is an error; a loose mode is narrowed. */
async function loadCa(keyPath: string): Promise<Ca | undefined> {
  const info = await lstat(keyPath).catch((error: NodeJS.ErrnoException) => (error.code === "ENOENT" ? undefined : Promise.reject(error)));
  if (!info) return undefined;
  if (!info.isFile()) throw new LocalCaError(`the local CA ${keyPath} is not a regular file`);
  if (process.getuid && info.uid !== process.getuid()) throw new LocalCaError(`the local CA ${keyPath} belongs to another user (uid ${info.uid}); remove it to make a new one`);
  if ((info.mode & 0o077) !== 0) await chmod(keyPath, PRIVATE_FILE_MODE);
  const read = await readFileBounded(keyPath, MAX_PEM_FILE_BYTES);
  if (read.kind !== "file") throw new LocalCaError(`the local CA ${keyPath} cannot be read (${read.kind})`);
  const text = read.bytes.toString("utf8");
  const pem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/.exec(text)?.[0];
  try {
    const key = createPrivateKey(text);
    const cert = new X509Certificate(pem ?? "");
    if (!cert.ca || !cert.checkPrivateKey(key)) throw new Error("its certificate is not a CA of its key");
    return { key, pem: pem!, cert };
  } catch (error) {
    throw new LocalCaError(`the local CA ${keyPath} does not hold a CA key and certificate (${error instanceof Error ? error.message : String(error)}); remove it to make a new one`);
  }
}

/** Makes a CA and stores it at `keyPath`; another process that stored one first wins and its CA is used (unless `replace`). */
async function makeCa(keyPath: string, replace: boolean): Promise<Ca> {
  const { privateKey, publicKey } = await makeKeys("rsa", { modulusLength: RSA_BITS });
  const now = Date.now();
  const pem = await caCertificate({
    privateKey,
    publicKey,
    commonName: "albedo local network CA",
    notBefore: new Date(now - CERTIFICATE_BACKDATE_MS),
    notAfter: new Date(now + CA_VALIDITY_MS),
  });
  const text = `${privateKey.export({ type: "pkcs8", format: "pem" }).toString()}${pem}`;
  if (replace) await writeFileAtomic(keyPath, text, PRIVATE_FILE_MODE);
  else {
    const temp = `${keyPath}.${process.pid}.new`;
    await writeFileAtomic(temp, text, PRIVATE_FILE_MODE);
    try {
      await link(temp, keyPath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      await unlink(temp).catch(() => undefined);
    }
  }
  const stored = await loadCa(keyPath);
  if (!stored) throw new LocalCaError(`the local CA ${keyPath} vanished as it was made`);
  return stored;
}

/** contextFor: leaves minted once per host with one leaf key, at most MAX_LEAF_CERTIFICATES kept, renewed near their end. */
function leafCache(ca: Ca): (host: string) => Promise<SecureContext> {
  const leaves = new Map<string, { context: Promise<SecureContext>; notAfter: number }>();
  let leafKeys: Promise<{ privateKey: KeyObject; publicKey: KeyObject }> | undefined;
  return (host) => {
    const now = Date.now();
    const held = leaves.get(host);
    if (held && held.notAfter - LEAF_RENEW_BEFORE_MS > now) {
      leaves.delete(host);
      leaves.set(host, held);
      return held.context;
    }
    leafKeys ??= makeKeys("rsa", { modulusLength: RSA_BITS });
    const notAfter = Math.min(now + LEAF_VALIDITY_MS, new Date(ca.cert.validTo).getTime());
    const context = leafKeys.then(async ({ privateKey, publicKey }) => {
      const cert = await leafCertificate({ host, caPem: ca.pem, caKey: ca.key, publicKey, notBefore: new Date(now - CERTIFICATE_BACKDATE_MS), notAfter: new Date(notAfter) });
      return createSecureContext({ key: privateKey.export({ type: "pkcs8", format: "pem" }), cert });
    });
    leaves.delete(host);
    leaves.set(host, { context, notAfter });
    context.catch(() => {
      if (leaves.get(host)?.context === context) leaves.delete(host);
    });
    while (leaves.size > MAX_LEAF_CERTIFICATES) leaves.delete(leaves.keys().next().value!);
    return context;
  };
}
