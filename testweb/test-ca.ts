// The test web's certificates, made afresh each time it starts and kept in memory only (the
// CA file a crawler is told to trust is written to a temporary directory by tls-hosts.ts):
// nothing here is a key anyone could use for anything real.
//
//   test web CA (root) ─┬ test web intermediate ─┬ the web's certificate: every host it serves
//                       │                        ├ expired.badtls.test      (expired yesterday)
//                       │                        └ wrong-name.badtls.test   (made for another name)
//                       └ a second intermediate ── incomplete-chain.badtls.test (sent without it)
//   another CA (root, not trusted) ── its intermediate ── unknown-ca.badtls.test
//   self-signed.badtls.test (signs itself)
//
// The incomplete chain's intermediate is one no server context holds: OpenSSL completes a
// server's chain from the certificates it knows, and would send the first intermediate along.
// node-forge lays out the certificates (Node's crypto has no certificate builder); Node makes
// the RSA keys and signs (forge's own RSA takes 300 ms a signature). RSA 2048: forge's
// certificates carry RSA keys only.

import { generateKeyPair, randomBytes, sign } from 'node:crypto';
import { promisify } from 'node:util';
import { isIP } from 'node:net';
import forge from 'node-forge';

/** What a TLS server presents for a host name: its private key and the chain it sends (leaf first). */
export interface TlsIdentity {
  key: string;
  cert: string;
}

export interface TestPki {
  /** the root crawlers are told to trust (PEM) */
  caPem: string;
  /** the web's own certificate, valid for `names`, with its intermediate */
  web: TlsIdentity;
  expired: TlsIdentity;
  wrongName: TlsIdentity;
  incompleteChain: TlsIdentity;
  unknownCa: TlsIdentity;
  selfSigned: TlsIdentity;
}

interface KeyPair {
  /** the private key, PKCS#8 PEM */
  pem: string;
  publicKey: forge.pki.rsa.PublicKey;
}

interface Issuer {
  cert: forge.pki.Certificate;
  keys: KeyPair;
}

const DAY_MS = 86_400_000;

const generate = promisify(generateKeyPair);

async function rsaKeys(): Promise<KeyPair> {
  const { privateKey, publicKey } = await generate('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  return { pem: privateKey, publicKey: forge.pki.publicKeyFromPem(publicKey) as forge.pki.rsa.PublicKey };
}

/** What forge's cert.sign does, with Node's RSA: sha256WithRSAEncryption over the DER of the TBS certificate. */
function signCertificate(cert: forge.pki.Certificate, keyPem: string): void {
  const oid = forge.pki.oids['sha256WithRSAEncryption']!;
  cert.siginfo.algorithmOid = oid;
  (cert as unknown as { signatureOid: string }).signatureOid = oid;
  const tbs = (forge.pki as unknown as { getTBSCertificate(c: forge.pki.Certificate): forge.asn1.Asn1 }).getTBSCertificate(cert);
  (cert as unknown as { tbsCertificate: forge.asn1.Asn1 }).tbsCertificate = tbs;
  const der = Buffer.from(forge.asn1.toDer(tbs).getBytes(), 'binary');
  cert.signature = sign('sha256', der, keyPem).toString('binary');
}

/** A positive serial number (the first bit clear), random as CAs make them. */
const serial = (): string => `01${randomBytes(15).toString('hex')}`;

function certificate(o: {
  subject: string;
  keys: KeyPair;
  issuer: Issuer | 'self';
  ca: boolean;
  names?: readonly string[];
  notBefore: Date;
  notAfter: Date;
}): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = o.keys.publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = o.notBefore;
  cert.validity.notAfter = o.notAfter;
  const subject = [{ name: 'commonName', value: o.subject }, { name: 'organizationName', value: 'jetstream-crawler test web' }];
  cert.setSubject(subject);
  cert.setIssuer(o.issuer === 'self' ? subject : o.issuer.cert.subject.attributes);
  const extensions: object[] = o.ca
    ? [
        { name: 'basicConstraints', cA: true, critical: true },
        { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
      ]
    : [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
        { name: 'extKeyUsage', serverAuth: true },
        { name: 'subjectAltName', altNames: (o.names ?? []).map((n) => (isIP(n) ? { type: 7, ip: n } : { type: 2, value: n })) },
      ];
  extensions.push({ name: 'subjectKeyIdentifier' });
  if (o.issuer !== 'self') extensions.push({ name: 'authorityKeyIdentifier', keyIdentifier: o.issuer.cert.generateSubjectKeyIdentifier().getBytes() });
  cert.setExtensions(extensions);
  signCertificate(cert, o.issuer === 'self' ? o.keys.pem : o.issuer.keys.pem);
  return cert;
}

const pem = (c: forge.pki.Certificate): string => forge.pki.certificateToPem(c);

/**
 * Makes the test web's CAs and certificates. `names` are what the web's certificate is valid
 * for: host names, `*.domain` wildcards (one label), IP addresses.
 */
export async function makeTestPki(names: readonly string[], now = Date.now()): Promise<TestPki> {
  const valid = { notBefore: new Date(now - DAY_MS), notAfter: new Date(now + 30 * DAY_MS) };
  const caValid = { notBefore: new Date(now - 2 * DAY_MS), notAfter: new Date(now + 365 * DAY_MS) };
  // Two keys, one for the CAs and one for the leaves: what these hosts test is names, dates and
  // chains, which a verifier follows by issuer name; and an RSA key takes up to a second to make.
  const [leafKeys, caKeys] = await Promise.all([rsaKeys(), rsaKeys()]);

  const ca = (subject: string, keys: KeyPair, issuer: Issuer | 'self'): Issuer => ({ cert: certificate({ subject, keys, issuer, ca: true, ...caValid }), keys });
  const root = ca('jetstream-crawler test web CA', caKeys, 'self');
  const inter = ca('jetstream-crawler test web intermediate', caKeys, root);
  const hidden = ca('jetstream-crawler test web second intermediate', caKeys, root);
  const otherRoot = ca('another CA nobody trusts', caKeys, 'self');
  const otherInter = ca('another intermediate', caKeys, otherRoot);
  const leaf = (issuer: Issuer | 'self', leafNames: readonly string[], validity = valid) =>
    certificate({ subject: leafNames[0] ?? 'test web', keys: leafKeys, issuer, ca: false, names: leafNames, ...validity });

  const identity = (chain: forge.pki.Certificate[]): TlsIdentity => ({ key: leafKeys.pem, cert: chain.map(pem).join('') });
  return {
    caPem: pem(root.cert),
    web: identity([leaf(inter, names), inter.cert]),
    expired: identity([leaf(inter, ['expired.badtls.test'], { notBefore: new Date(now - 30 * DAY_MS), notAfter: new Date(now - DAY_MS) }), inter.cert]),
    wrongName: identity([leaf(inter, ['www.elsewhere.test']), inter.cert]),
    incompleteChain: identity([leaf(hidden, ['incomplete-chain.badtls.test'])]),
    unknownCa: identity([leaf(otherInter, ['unknown-ca.badtls.test']), otherInter.cert]),
    selfSigned: identity([leaf('self', ['self-signed.badtls.test'])]),
  };
}
