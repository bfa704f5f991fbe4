import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpFetchError, type HttpFetchErrorCode } from '../../ports/http.js';
import { hostDead, refusedEverywhere } from '../../stages/shared/politeness/failure-policy.js';

const failure = (code: HttpFetchErrorCode, rootCode: string, rootMessage: string) =>
  new HttpFetchError(code, `fetching http://h.example/robots.txt: connecting: ${rootCode}`, {
    cause: Object.assign(new Error(rootMessage), { code: rootCode }),
  });

// which failures end a host's URLs at once (they cannot heal within a crawl) and which wait
const CASES: Array<[string, HttpFetchError, ReturnType<typeof hostDead>]> = [
  ['NXDOMAIN', failure('dns', 'ENOTFOUND', 'resolving h.example: no such host'), { outcome: 'network_error', reason: 'dns_error: ENOTFOUND h.example (the name does not exist)' }],
  ['getaddrinfo: no such name', failure('dns', 'EAI_NONAME', 'getaddrinfo EAI_NONAME'), { outcome: 'network_error', reason: 'dns_error: EAI_NONAME h.example (the name does not exist)' }],
  ['NODATA', failure('dns', 'ENODATA', 'resolving h.example: no such host'), { outcome: 'network_error', reason: 'dns_error: ENODATA h.example (the name has no address)' }],
  ['SSRF refusal', failure('refused', 'ERR_CRAWL_REFUSED_ADDRESS', 'refused to connect to 10.0.0.1: private address'), { outcome: 'refused', reason: 'refused: refused to connect to 10.0.0.1: private address' }],
  [
    'the proxy refuses the tunnel',
    failure('proxy', 'ERR_CRAWL_PROXY', 'proxy http://127.0.0.1:3128 answered 407 Proxy Authentication Required to CONNECT 192.0.2.1:80: the proxy requires credentials'),
    { outcome: 'network_error', reason: 'proxy_error: proxy http://127.0.0.1:3128 answered 407 Proxy Authentication Required to CONNECT 192.0.2.1:80: the proxy requires credentials' },
  ],
  ['the proxy could not reach the address (502)', failure('connect', 'ERR_CRAWL_PROXY_BAD_GATEWAY', 'proxy http://127.0.0.1:3128 answered 502 Bad Gateway to CONNECT 192.0.2.1:80'), null],
  ['SERVFAIL', failure('dns', 'ESERVFAIL', 'resolving h.example: ESERVFAIL'), null],
  ['DNS timeout', failure('dns', 'ETIMEOUT', 'resolving h.example: ETIMEOUT'), null],
  ['DNS server refusing', failure('dns', 'EREFUSED', 'resolving h.example: EREFUSED'), null],
  ['getaddrinfo try again', failure('dns', 'EAI_AGAIN', 'getaddrinfo EAI_AGAIN'), null],
  ['connection refused', failure('connect', 'ECONNREFUSED', 'connect ECONNREFUSED 192.0.2.1:80'), null],
  ['reset', failure('reset', 'ECONNRESET', 'read ECONNRESET'), null],
  ['timeout', failure('timeout', 'UND_ERR_CONNECT_TIMEOUT', 'connect timeout'), null],
  // a certificate that cannot be trusted ends the host; a handshake that breaks off may heal
  ['expired certificate', failure('tls', 'CERT_HAS_EXPIRED', 'certificate has expired'), { outcome: 'network_error', reason: 'tls_error: certificate has expired' }],
  ['certificate not yet valid', failure('tls', 'CERT_NOT_YET_VALID', 'certificate is not yet valid'), { outcome: 'network_error', reason: 'tls_error: certificate is not yet valid' }],
  [
    'unknown issuer',
    failure('tls', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'unable to get local issuer certificate'),
    { outcome: 'network_error', reason: 'tls_error: unable to get local issuer certificate (the chain ends at a CA that is not trusted)' },
  ],
  [
    'incomplete chain',
    failure('tls', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'unable to verify the first certificate'),
    { outcome: 'network_error', reason: 'tls_error: unable to verify the first certificate (an incomplete chain, or an unknown issuer)' },
  ],
  ['self-signed', failure('tls', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate'), { outcome: 'network_error', reason: 'tls_error: self-signed certificate' }],
  [
    'self-signed root in the chain',
    failure('tls', 'SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain'),
    { outcome: 'network_error', reason: 'tls_error: self-signed certificate in certificate chain (its root CA is not trusted)' },
  ],
  [
    'wrong name',
    failure('tls', 'ERR_TLS_CERT_ALTNAME_INVALID', "Hostname/IP does not match certificate's altnames: Host: h.example. is not in the cert's altnames: DNS:other.example"),
    { outcome: 'network_error', reason: "tls_error: certificate is not valid for this host name (Hostname/IP does not match certificate's altnames: Host: h.example. is not in the cert's altnames: DNS:other.example)" },
  ],
  ['reset in the TLS handshake', failure('reset', 'ECONNRESET', 'Client network socket disconnected before secure TLS connection was established'), null],
  ['no common TLS version or cipher', failure('tls', 'ERR_SSL_UNSUPPORTED_PROTOCOL', 'unsupported protocol'), null],
  ['TLS alert from the server', failure('tls', 'EPROTO', 'tlsv1 alert internal error'), null],
  ['TLS handshake timeout', failure('timeout', 'UND_ERR_CONNECT_TIMEOUT', 'connect timeout'), null],
];

for (const [name, err, expected] of CASES) {
  test(`hostDead: ${name} -> ${expected ? expected.outcome : 'may heal'}`, () => {
    assert.deepEqual(hostDead(err, 'h.example'), expected);
  });
}

test('rootCause is the innermost error, without the context the client adds', () => {
  const err = failure('dns', 'ENOTFOUND', 'resolving h.example: no such host');
  assert.deepEqual(err.rootCause, { code: 'ENOTFOUND', message: 'resolving h.example: no such host' });
  assert.deepEqual(new HttpFetchError('other', 'no cause').rootCause, { code: 'other', message: 'no cause' });
});

test('refusedEverywhere: every address refusing is the reason a second refusal ends the host with; anything else is not', () => {
  const refused = (everyAddressRefused: boolean) =>
    new HttpFetchError('connect', 'fetching http://h.example/robots.txt: connecting: connect ECONNREFUSED 192.0.2.1:80', {
      cause: Object.assign(new Error('connect ECONNREFUSED 192.0.2.1:80'), { code: 'ECONNREFUSED' }),
      everyAddressRefused,
    });
  assert.equal(refusedEverywhere(refused(true)), 'connection_refused: connect ECONNREFUSED 192.0.2.1:80');
  assert.equal(refusedEverywhere(refused(false)), null, 'one address refusing beside one that timed out, or a proxy that is down');
  assert.equal(hostDead(refused(true), 'h.example'), null, 'one refusal alone does not end the host');
  const reset = new HttpFetchError('reset', 'fetching http://h.example/robots.txt: read ECONNRESET', { everyAddressRefused: true });
  assert.equal(reset.everyAddressRefused, false, 'only a connect failure can be a refusal');
  assert.equal(refusedEverywhere(reset), null);
});
