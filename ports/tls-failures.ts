/**
 * The TLS failures an HTTP client reports that say the server's certificate cannot be trusted:
 * OpenSSL's verification results (X509_V_ERR_*, which Node reports as the error's `code`) and
 * the host name check Node adds. They are the verdict of the certificate the server sends, so
 * none of them heals within a crawl; a handshake that breaks off (a reset, a timeout) or a
 * protocol the two sides cannot agree on is not among them.
 *
 * Each code has the words a user reads in `fetch_log` (after `tls_error: `): OpenSSL's own
 * message where it is clear, with what it usually means where it is not.
 */
export const CERTIFICATE_FAILURES: Readonly<Record<string, string>> = Object.freeze({
  CERT_HAS_EXPIRED: 'certificate has expired',
  CERT_NOT_YET_VALID: 'certificate is not yet valid',
  ERROR_IN_CERT_NOT_BEFORE_FIELD: "format error in certificate's notBefore field",
  ERROR_IN_CERT_NOT_AFTER_FIELD: "format error in certificate's notAfter field",
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'self-signed certificate in certificate chain (its root CA is not trusted)',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'unable to get local issuer certificate (the chain ends at a CA that is not trusted)',
  UNABLE_TO_GET_ISSUER_CERT: 'unable to get issuer certificate',
  // the server sent its certificate alone and no trusted CA signed it: an intermediate is
  // missing from the chain it sends, or the certificate was issued by an unknown CA
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'unable to verify the first certificate (an incomplete chain, or an unknown issuer)',
  ERR_TLS_CERT_ALTNAME_INVALID: "certificate is not valid for this host name",
  HOSTNAME_MISMATCH: 'certificate is not valid for this host name',
  CERT_SIGNATURE_FAILURE: 'certificate signature failure',
  CERT_REVOKED: 'certificate revoked',
  CERT_UNTRUSTED: 'certificate not trusted',
  CERT_REJECTED: 'certificate rejected',
  CERT_CHAIN_TOO_LONG: 'certificate chain too long',
  INVALID_CA: 'invalid CA certificate',
  PATH_LENGTH_EXCEEDED: 'path length constraint exceeded',
  INVALID_PURPOSE: 'unsupported certificate purpose',
  UNABLE_TO_DECRYPT_CERT_SIGNATURE: "unable to decrypt certificate's signature",
  UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY: 'unable to decode issuer public key',
  EE_KEY_TOO_SMALL: 'the certificate key is too small',
  CA_KEY_TOO_SMALL: 'the CA certificate key is too small',
  CA_MD_TOO_WEAK: 'the CA certificate is signed with a digest that is too weak',
});

/** The words for a certificate failure code, or null when the code is not one (it may heal, or is not about the certificate). */
export function certificateFailure(code: string | null | undefined): string | null {
  return code != null && Object.hasOwn(CERTIFICATE_FAILURES, code) ? CERTIFICATE_FAILURES[code]! : null;
}
