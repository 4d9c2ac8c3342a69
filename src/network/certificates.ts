/**
 * X.509 certificates for the local CA and the leaves it mints per intercepted host (N-3).
 *
 * Built with node-forge: one package with no dependencies and no global side effect, maintained,
 * and used here only to lay out certificates. @peculiar/x509 (WebCrypto) was the other candidate;
 * its releases need a Reflect metadata polyfill installed into the daemon's globals and bring a
 * dozen packages. Nothing here parses or verifies a certificate that came from the network: Node's
 * TLS (OpenSSL) checks upstream certificates, and keys are made and used by Node's crypto — forge
 * lays out the to-be-signed certificate and Node signs it (RSASSA-PKCS1-v1_5 over SHA-256), so
 * minting a leaf costs a millisecond of native work instead of tens of pure JavaScript.
 * node-forge is loaded with the first certificate made, never by a proxy that intercepts nothing.
 */
import { constants, privateEncrypt, randomBytes, type KeyObject } from "node:crypto";
import type * as Forge from "node-forge";

type ForgeModule = typeof Forge;
let loaded: Promise<ForgeModule> | undefined;
const forge = (): Promise<ForgeModule> => (loaded ??= import("node-forge").then((module) => (module as { default?: ForgeModule }).default ?? (module as ForgeModule)));

/** The DER prefix of a SHA-256 DigestInfo (RFC 8017, 9.2 note 1): what PKCS#1 v1.5 signs, the digest appended. */
const SHA256_DIGEST_INFO = Buffer.from("3031300d060960864801650304020105000420", "hex");

/** A forge "private key" whose signature Node's crypto makes: forge hands it the SHA-256 digest of the to-be-signed bytes. */
function nativeSigner(key: KeyObject): Forge.pki.rsa.PrivateKey {
  const sign = (md: Forge.md.MessageDigest) => {
    const digest = Buffer.from(md.digest().getBytes(), "binary");
    return privateEncrypt({ key, padding: constants.RSA_PKCS1_PADDING }, Buffer.concat([SHA256_DIGEST_INFO, digest])).toString("binary");
  };
  return { sign } as unknown as Forge.pki.rsa.PrivateKey;
}

/** A positive 128-bit serial number, as hex. */
const serial = (): string => {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  return bytes.toString("hex");
};

export interface CertificateRequest {
  readonly publicKey: KeyObject;
  readonly notBefore: Date;
  readonly notAfter: Date;
}

/** A self-signed CA certificate (PEM) for `keys`, good for signing leaves only. */
export async function caCertificate(request: CertificateRequest & { readonly privateKey: KeyObject; readonly commonName: string }): Promise<string> {
  const { pki, md } = await forge();
  const cert = pki.createCertificate();
  fill(pki, cert, request);
  const name = [{ name: "commonName", value: request.commonName }, { name: "organizationName", value: "albedo" }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  cert.sign(nativeSigner(request.privateKey), md.sha256.create());
  return pki.certificateToPem(cert);
}

/** A server certificate (PEM) for `host`, signed by the CA whose certificate is `caPem` and key `caKey`. */
export async function leafCertificate(request: CertificateRequest & { readonly host: string; readonly caPem: string; readonly caKey: KeyObject }): Promise<string> {
  const { pki, md } = await forge();
  const ca = pki.certificateFromPem(request.caPem);
  const cert = pki.createCertificate();
  fill(pki, cert, request);
  cert.setSubject([{ name: "commonName", value: request.host }]);
  cert.setIssuer(ca.subject.attributes);
  cert.setExtensions([
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    { name: "subjectAltName", altNames: [{ type: 2, value: request.host }] },
    { name: "authorityKeyIdentifier", keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(nativeSigner(request.caKey), md.sha256.create());
  return pki.certificateToPem(cert);
}

function fill(pki: ForgeModule["pki"], cert: Forge.pki.Certificate, request: CertificateRequest): void {
  cert.publicKey = pki.publicKeyFromPem(request.publicKey.export({ type: "spki", format: "pem" }).toString());
  cert.serialNumber = serial();
  cert.validity.notBefore = request.notBefore;
  cert.validity.notAfter = request.notAfter;
}
