// TLS and HTTP/2 failures as Node and undici report them, through the client's one mapping
// (error-mapping.ts) and the failure policy's verdict on the host (hostDead): a certificate
// that cannot be trusted ends the host at once with its reason; a handshake that breaks off
// or a protocol the two sides cannot agree on may heal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fetchError } from '../../pipeline/adapters/http/error-mapping.js';
import { hostDead, judgeFetch } from '../../stages/shared/politeness/failure-policy.js';
import { CERTIFICATE_FAILURES, certificateFailure } from '../../ports/tls-failures.js';

const URL = 'https://h.example/robots.txt';

/** An error as the TLS socket raises it (code and message as Node writes them), behind undici's connect. */
const nodeError = (code: string, message: string): Error => Object.assign(new Error(message), { code });

const mapped = (err: unknown, phase = 'connecting') =>
  fetchError(err, { url: URL, phase, timedOut: null, connectTimeoutMs: 10_000, headersTimeoutMs: 20_000, totalTimeoutMs: 30_000, rawBytes: 0, decodeErrors: new WeakSet() });

// [what happened, the error Node or undici raises, the port's code, how the host's URLs end (null: they wait, it may heal)]
const CASES: Array<[string, Error, string, string | null]> = [
  ['expired', nodeError('CERT_HAS_EXPIRED', 'certificate has expired'), 'tls', 'tls_error: certificate has expired'],
  ['not yet valid', nodeError('CERT_NOT_YET_VALID', 'certificate is not yet valid'), 'tls', 'tls_error: certificate is not yet valid'],
  ['unknown CA, intermediate sent', nodeError('UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'unable to get local issuer certificate'), 'tls', 'tls_error: unable to get local issuer certificate (the chain ends at a CA that is not trusted)'],
  ['incomplete chain', nodeError('UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'unable to verify the first certificate'), 'tls', 'tls_error: unable to verify the first certificate (an incomplete chain, or an unknown issuer)'],
  ['self-signed', nodeError('DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate'), 'tls', 'tls_error: self-signed certificate'],
  ['untrusted root sent in the chain', nodeError('SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain'), 'tls', 'tls_error: self-signed certificate in certificate chain (its root CA is not trusted)'],
  ['a CA that may not sign', nodeError('INVALID_CA', 'invalid CA certificate'), 'tls', 'tls_error: invalid CA certificate'],
  [
    'wrong name',
    nodeError('ERR_TLS_CERT_ALTNAME_INVALID', "Hostname/IP does not match certificate's altnames: Host: h.example. is not in the cert's altnames: DNS:other.example"),
    'tls',
    "tls_error: certificate is not valid for this host name (Hostname/IP does not match certificate's altnames: Host: h.example. is not in the cert's altnames: DNS:other.example)",
  ],
  ['reset in the handshake', nodeError('ECONNRESET', 'Client network socket disconnected before secure TLS connection was established'), 'reset', null],
  ['handshake alert', nodeError('EPROTO', 'C0E7:error:0A000438:SSL routines:ssl3_read_bytes:tlsv1 alert internal error'), 'tls', null],
  ['no common protocol version', nodeError('ERR_SSL_UNSUPPORTED_PROTOCOL', 'unsupported protocol'), 'tls', null],
  ['plain HTTP on the TLS port', nodeError('ERR_SSL_WRONG_VERSION_NUMBER', 'wrong version number'), 'tls', null],
  ['handshake too slow', nodeError('UND_ERR_CONNECT_TIMEOUT', 'Connect Timeout Error'), 'timeout', null],
  ['HTTP/2 stream reset by the server', nodeError('ERR_HTTP2_STREAM_ERROR', 'Stream closed with error code NGHTTP2_REFUSED_STREAM'), 'reset', null],
  ['HTTP/2 GOAWAY', nodeError('UND_ERR_INFO', 'HTTP/2: "GOAWAY" frame received with code 0'), 'reset', null],
  ['HTTP/2 stream closed early', nodeError('UND_ERR_INFO', 'HTTP/2: stream closed before the response was complete'), 'reset', null],
];

for (const [name, err, code, ends] of CASES) {
  test(`${name}: ${code}, ${ends === null ? 'may heal' : 'ends the host'}`, () => {
    const failure = mapped(err);
    assert.equal(failure.code, code);
    assert.match(failure.message, /^fetching https:\/\/h\.example\/robots\.txt: /);
    assert.deepEqual(hostDead(failure, 'h.example'), ends === null ? null : { outcome: 'network_error', reason: ends });
  });
}

test('undici wraps the TLS error of a failed connect: the code is found in its cause', () => {
  const wrapped = Object.assign(new Error('fetch failed'), { cause: nodeError('CERT_HAS_EXPIRED', 'certificate has expired') });
  const failure = mapped(wrapped);
  assert.equal(failure.code, 'tls');
  assert.deepEqual(hostDead(failure, 'h.example'), { outcome: 'network_error', reason: 'tls_error: certificate has expired' });
});

test('a page URL whose certificate fails is not retried; one whose handshake was reset is', () => {
  const now = Date.now();
  assert.equal(judgeFetch(null, mapped(nodeError('CERT_HAS_EXPIRED', 'certificate has expired')), 1000, 5, now).retryable, false);
  assert.equal(judgeFetch(null, mapped(nodeError('ECONNRESET', 'Client network socket disconnected before secure TLS connection was established')), 1000, 5, now).retryable, true);
});

test('every certificate failure code has words, and nothing else does', () => {
  for (const [code, words] of Object.entries(CERTIFICATE_FAILURES)) {
    assert.ok(words.length > 0 && certificateFailure(code) === words, code);
    assert.equal(mapped(nodeError(code, words)).code, 'tls', `${code} is classified as a TLS failure`);
  }
  for (const code of ['ECONNRESET', 'EPROTO', 'ERR_SSL_WRONG_VERSION_NUMBER', 'toString', 'constructor', '', null, undefined]) assert.equal(certificateFailure(code), null, String(code));
});
