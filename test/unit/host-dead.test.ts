import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpFetchError, type HttpFetchErrorCode } from '../../ports/http.js';
import { hostDead } from '../../stages/shared/failure-policy.js';

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
  ['TLS', failure('tls', 'CERT_HAS_EXPIRED', 'certificate has expired'), null],
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
