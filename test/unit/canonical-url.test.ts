import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  canonicalize,
  hostOf,
  isTrackingParam,
  MAX_URL_LENGTH,
  TRACKING_PARAMS,
  type RejectReason,
} from '../../stages/normalize/canonical-url.js';

interface Case {
  name: string;
  input: string;
  base?: string;
  expected: string;
}

const accepted: Case[] = [
  // scheme and host case
  { name: 'scheme lower-cased', input: 'HTTP://example.com/', expected: 'http://example.com/' },
  { name: 'host lower-cased', input: 'https://WWW.Example.COM/Path', expected: 'https://www.example.com/Path' },
  { name: 'path case kept', input: 'http://example.com/A/b/C', expected: 'http://example.com/A/b/C' },
  // IDN
  { name: 'IDN to punycode', input: 'http://bücher.de/', expected: 'http://xn--bcher-kva.de/' },
  { name: 'IDN TLD to punycode', input: 'https://нэб.рф/', expected: 'https://xn--90ax2c.xn--p1ai/' },
  { name: 'upper-case IDN', input: 'http://BÜCHER.de/', expected: 'http://xn--bcher-kva.de/' },
  { name: 'percent-encoded host decoded', input: 'https://example%2Ecom/', expected: 'https://example.com/' },
  { name: 'trailing dot on host removed', input: 'https://www.example.org./', expected: 'https://www.example.org/' },
  // port
  { name: 'default http port dropped', input: 'http://example.com:80/a', expected: 'http://example.com/a' },
  { name: 'default https port dropped', input: 'https://example.com:443/a', expected: 'https://example.com/a' },
  { name: 'port 443 on http kept', input: 'http://example.com:443/a', expected: 'http://example.com:443/a' },
  { name: 'non-default port kept', input: 'http://example.com:8080/a', expected: 'http://example.com:8080/a' },
  { name: 'empty port removed', input: 'http://example.com:/a', expected: 'http://example.com/a' },
  { name: 'leading zeros in port', input: 'http://example.com:0080/', expected: 'http://example.com/' },
  // fragment and userinfo
  { name: 'fragment dropped', input: 'http://example.com/a#section', expected: 'http://example.com/a' },
  { name: 'empty fragment dropped', input: 'http://example.com/a?b=1#', expected: 'http://example.com/a?b=1' },
  { name: 'userinfo dropped', input: 'http://user:pass@example.com/a', expected: 'http://example.com/a' },
  { name: 'username only dropped', input: 'https://user@example.com/', expected: 'https://example.com/' },
  // path
  { name: 'empty path becomes /', input: 'http://example.com', expected: 'http://example.com/' },
  { name: 'dot segments resolved', input: 'http://example.com/a/./b/../c', expected: 'http://example.com/a/c' },
  { name: '.. above root', input: 'http://example.com/../../a', expected: 'http://example.com/a' },
  { name: 'encoded dot segments', input: 'http://example.com/a/%2e%2E/b', expected: 'http://example.com/b' },
  { name: 'duplicate slashes collapsed', input: 'http://example.com//a///b//', expected: 'http://example.com/a/b/' },
  { name: 'backslash is a path separator', input: 'http://example.com\\a\\b', expected: 'http://example.com/a/b' },
  // percent-encoding
  { name: 'unreserved escapes decoded', input: 'http://example.com/%66oo%2d%7E%5F%2E', expected: 'http://example.com/foo-~_.' },
  { name: 'reserved escapes upper-cased', input: 'http://example.com/a%2fb%3fc', expected: 'http://example.com/a%2Fb%3Fc' },
  { name: 'non-ASCII escapes upper-cased', input: 'http://example.com/r%c3%a9sum%c3%a9', expected: 'http://example.com/r%C3%A9sum%C3%A9' },
  { name: 'stray % encoded', input: 'http://example.com/100%/p%zz', expected: 'http://example.com/100%25/p%25zz' },
  { name: 'stray % at the end of query', input: 'http://example.com/?q=a%2', expected: 'http://example.com/?q=a%252' },
  { name: 'space encoded', input: 'http://example.com/a b?q=c d', expected: 'http://example.com/a%20b?q=c%20d' },
  { name: 'non-ASCII path encoded as UTF-8', input: 'http://example.com/café', expected: 'http://example.com/caf%C3%A9' },
  { name: 'brackets and pipes encoded', input: 'http://example.com/[a]|^?x[y]=|^`{}', expected: 'http://example.com/%5Ba%5D%7C%5E?x%5By%5D=%7C%5E%60%7B%7D' },
  { name: 'query escapes normalised, reserved kept', input: 'http://example.com/?q=a%26b%3d%7e', expected: 'http://example.com/?q=a%26b%3D~' },
  { name: '+ in query kept', input: 'http://example.com/?q=a+b', expected: 'http://example.com/?q=a+b' },
  { name: 'control chars encoded', input: 'http://example.com/\u0001!', expected: 'http://example.com/%01!' },
  { name: 'tabs and newlines removed', input: 'http://exa\tmple.com/a\r\nb', expected: 'http://example.com/ab' },
  { name: 'surrounding whitespace trimmed', input: '  http://example.com/a  ', expected: 'http://example.com/a' },
  // tracking parameters
  { name: 'utm_* removed', input: 'http://example.com/?utm_source=x&a=1&utm_medium=y&utm_campaign=z', expected: 'http://example.com/?a=1' },
  { name: 'UTM_ any case removed', input: 'http://example.com/?UTM_Source=x&a=1&Utm_Term=t', expected: 'http://example.com/?a=1' },
  { name: 'encoded utm name removed', input: 'http://example.com/?utm%5Fsource=x&a=1', expected: 'http://example.com/?a=1' },
  { name: 'fbclid removed', input: 'http://example.com/p?fbclid=abc', expected: 'http://example.com/p' },
  { name: 'gclid removed', input: 'http://example.com/p?gclid=abc&q=1', expected: 'http://example.com/p?q=1' },
  {
    name: 'other click IDs removed',
    input: 'http://example.com/p?dclid=1&msclkid=2&mc_eid=3&_ga=4&yclid=5&igshid=6&keep=7',
    expected: 'http://example.com/p?keep=7',
  },
  { name: 'names merely containing utm kept', input: 'http://example.com/?xutm_a=1&utm=2&gclid_x=3', expected: 'http://example.com/?gclid_x=3&utm=2&xutm_a=1' },
  // query sorting and shape
  { name: 'query sorted by name', input: 'http://example.com/?b=2&c=3&a=1', expected: 'http://example.com/?a=1&b=2&c=3' },
  { name: 'sort is stable for equal names', input: 'http://example.com/?b=2&a=9&b=1&a=3', expected: 'http://example.com/?a=9&a=3&b=2&b=1' },
  { name: 'sort compares names only', input: 'http://example.com/?ab=1&a=2', expected: 'http://example.com/?a=2&ab=1' },
  { name: 'blank values kept (as bare name)', input: 'http://example.com/?b=&a', expected: 'http://example.com/?a&b' },
  { name: 'empty query removed', input: 'http://example.com/?', expected: 'http://example.com/' },
  { name: 'query of empty pairs removed', input: 'http://example.com/a?&&', expected: 'http://example.com/a' },
  { name: 'empty parameter names dropped', input: 'http://example.com/?=1&a=1&=', expected: 'http://example.com/?a=1' },
  { name: 'query made empty by tracking removal', input: 'http://example.com/a?utm_source=x', expected: 'http://example.com/a' },
  { name: 'value with =', input: 'http://example.com/?a=b=c', expected: 'http://example.com/?a=b=c' },
  { name: '; is not a separator', input: 'http://example.com/?q=tl;dr', expected: 'http://example.com/?q=tl;dr' },
  { name: 'query without pairs kept', input: 'http://example.com/?/category/3', expected: 'http://example.com/?/category/3' },
  // relative resolution
  { name: 'relative to base', input: '../c?b=2&a=1#f', base: 'http://example.com/a/b/', expected: 'http://example.com/a/c?a=1&b=2' },
  { name: 'absolute path vs base', input: '/x', base: 'https://example.com/a/b', expected: 'https://example.com/x' },
  { name: 'scheme-relative vs base', input: '//other.org/p', base: 'https://example.com/', expected: 'https://other.org/p' },
  { name: 'absolute input ignores base', input: 'http://b.org/', base: 'https://example.com/', expected: 'http://b.org/' },
  { name: 'query-only vs base', input: '?q=1', base: 'http://example.com/p?x=2', expected: 'http://example.com/p?q=1' },
  { name: 'scheme-less host without base', input: 'example.com/index.html', expected: 'http://example.com/index.html' },
  { name: 'scheme-less host with port', input: 'localhost:8080/x', expected: 'http://localhost:8080/x' },
  { name: 'scheme-relative without base', input: '//example.com/x', expected: 'http://example.com/x' },
  // hosts
  { name: 'IPv4 host', input: 'http://127.0.0.1:8080/', expected: 'http://127.0.0.1:8080/' },
  { name: 'IPv4 shorthand normalised', input: 'http://0x7f.1/', expected: 'http://127.0.0.1/' },
  { name: 'IPv6 host', input: 'http://[2001:DB8::1]:80/a', expected: 'http://[2001:db8::1]/a' },
  { name: 'underscore in host accepted', input: 'http://my_host.example.com/', expected: 'http://my_host.example.com/' },
  { name: '63-char label accepted', input: `http://${'a'.repeat(63)}.com/`, expected: `http://${'a'.repeat(63)}.com/` },
];

for (const c of accepted) {
  test(`canonicalize: ${c.name}`, () => {
    const r = canonicalize(c.input, c.base);
    assert.ok(r.ok, `expected ${JSON.stringify(c.input)} to be accepted, got ${JSON.stringify(r)}`);
    assert.equal(r.url, c.expected);
    // canonical form is a fixed point
    const again = canonicalize(r.url);
    assert.ok(again.ok);
    assert.equal(again.url, r.url);
  });
}

interface RejectCase {
  name: string;
  input: string;
  base?: string;
  reason: RejectReason;
}

const longHost = `${'a'.repeat(60)}.`.repeat(4) + 'com'; // 4*61 + 3 = 247 → ok
const tooLongHost = `${'a'.repeat(62)}.`.repeat(4) + 'com'; // 4*63 + 3 = 255 > 253

const rejected: RejectCase[] = [
  { name: 'mailto', input: 'mailto:a@example.com', reason: 'unsupported_scheme' },
  { name: 'javascript', input: 'javascript:alert(1)', reason: 'unsupported_scheme' },
  { name: 'ftp', input: 'ftp://example.com/file', reason: 'unsupported_scheme' },
  { name: 'file', input: 'file:///etc/passwd', reason: 'unsupported_scheme' },
  { name: 'data', input: 'data:text/html,hi', reason: 'unsupported_scheme' },
  { name: 'relative link against ftp base', input: 'x', base: 'ftp://example.com/', reason: 'unsupported_scheme' },
  { name: 'empty string', input: '', reason: 'invalid_url' },
  { name: 'whitespace only', input: '   ', reason: 'invalid_url' },
  { name: 'relative path without base', input: '/just/a/path', reason: 'invalid_url' },
  { name: 'invalid base', input: 'a', base: 'not a url', reason: 'invalid_url' },
  { name: 'empty host', input: 'http:///', reason: 'invalid_url' },
  { name: 'bad port', input: 'http://example.com:99999/', reason: 'invalid_url' },
  { name: 'unterminated IPv6', input: 'http://[::1/', reason: 'invalid_url' },
  { name: 'invalid percent escape in host', input: 'https://example%2Xcom/', reason: 'invalid_url' },
  { name: 'invalid UTF-8 in host', input: 'https://abc%FEdef.org/', reason: 'invalid_url' },
  { name: 'invalid char in host', input: 'http://exa!mple.com/', reason: 'invalid_host' },
  { name: 'host with comma', input: 'http://a,b.com/', reason: 'invalid_host' },
  { name: 'empty label', input: 'http://a..b.com/', reason: 'invalid_host' },
  { name: 'leading dot', input: 'http://.example.com/', reason: 'invalid_host' },
  { name: 'only a dot', input: 'http://./', reason: 'invalid_host' },
  { name: '64-char label', input: `http://${'a'.repeat(64)}.com/`, reason: 'invalid_host' },
  { name: 'host over 253 chars', input: `http://${tooLongHost}/`, reason: 'invalid_host' },
  { name: 'URL over 2048 chars', input: `http://example.com/${'a'.repeat(MAX_URL_LENGTH)}`, reason: 'too_long' },
  { name: 'huge input', input: `http://example.com/?q=${'a'.repeat(100_000)}`, reason: 'too_long' },
];

for (const c of rejected) {
  test(`canonicalize rejects: ${c.name}`, () => {
    const r = canonicalize(c.input, c.base);
    assert.equal(r.ok, false, `expected rejection, got ${JSON.stringify(r)}`);
    if (!r.ok) {
      assert.equal(r.reason, c.reason, r.detail);
      assert.ok(r.detail.length > 0);
    }
  });
}

test('canonicalize: a 253-char host is accepted', () => {
  assert.equal(longHost.length, 247);
  const r = canonicalize(`http://${longHost}/`);
  assert.ok(r.ok);
});

test('canonicalize: MAX_URL_LENGTH is 2048 and applies after canonicalisation', () => {
  assert.equal(MAX_URL_LENGTH, 2048);
  const prefix = 'http://example.com/';
  const exact = prefix + 'a'.repeat(MAX_URL_LENGTH - prefix.length);
  const r = canonicalize(exact);
  assert.ok(r.ok);
  assert.equal(r.url.length, MAX_URL_LENGTH);
  const over = canonicalize(exact + 'a');
  assert.equal(over.ok, false);
  // Over the limit before, under it after tracking parameters are removed: accepted.
  const shrinks = canonicalize(`${exact}?utm_source=${'x'.repeat(100)}`);
  assert.ok(shrinks.ok);
  // Under the limit before, over it after percent-encoding: rejected.
  const grows = canonicalize(prefix + 'é'.repeat(MAX_URL_LENGTH - prefix.length));
  assert.equal(grows.ok, false);
  if (!grows.ok) assert.equal(grows.reason, 'too_long');
});

test('canonicalize: host and registrableDomain', () => {
  const cases: [string, string, string][] = [
    ['https://www.Example.co.uk/a', 'www.example.co.uk', 'example.co.uk'],
    ['http://a.b.site.test/', 'a.b.site.test', 'site.test'],
    ['http://bücher.de/', 'xn--bcher-kva.de', 'xn--bcher-kva.de'],
    ['http://127.0.0.1:8080/', '127.0.0.1', '127.0.0.1'],
    ['http://[::1]/', '[::1]', '[::1]'],
    ['http://localhost:3000/', 'localhost', 'localhost'],
    ['https://alice.github.io/x', 'alice.github.io', 'alice.github.io'],
    ['https://example.org./', 'example.org', 'example.org'],
  ];
  for (const [input, host, domain] of cases) {
    const r = canonicalize(input);
    assert.ok(r.ok, input);
    assert.equal(r.host, host, input);
    assert.equal(r.registrableDomain, domain, input);
    assert.equal(hostOf(r.url), host, input);
  }
});

test('canonicalize: stripParams option removes extra parameters', () => {
  const r = canonicalize('http://example.com/?PHPSESSID=1&a=1&sid=2', undefined, { stripParams: ['phpsessid', 'sid'] });
  assert.ok(r.ok);
  assert.equal(r.url, 'http://example.com/?a=1');
});

test('TRACKING_PARAMS and isTrackingParam', () => {
  for (const name of ['utm_*', 'fbclid', 'gclid', 'dclid', 'msclkid', 'mc_eid', '_ga', 'yclid', 'igshid']) {
    assert.ok(TRACKING_PARAMS.includes(name), name);
  }
  assert.ok(Object.isFrozen(TRACKING_PARAMS));
  for (const name of ['utm_source', 'UTM_CONTENT', 'utm_', 'FBCLID', 'GClid', '_ga', 'utm%5fid']) {
    assert.equal(isTrackingParam(name), true, name);
  }
  for (const name of ['utm', 'q', '_gat', 'gclidx', 'xfbclid', '']) {
    assert.equal(isTrackingParam(name), false, name);
  }
});

test('hostOf', () => {
  assert.equal(hostOf('https://WWW.example.com:8443/a'), 'www.example.com');
  assert.equal(hostOf('http://[::1]:80/'), '[::1]');
  assert.equal(hostOf('http://example.com./'), 'example.com');
  assert.equal(hostOf('not a url'), '');
  assert.equal(hostOf(''), '');
});

test('canonicalize never throws on arbitrary strings, and its output is a fixed point', () => {
  const arbitraries = [
    fc.string({ maxLength: 200 }),
    fc.string({ unit: 'grapheme', maxLength: 100 }),
    fc.string({ unit: 'binary', maxLength: 100 }),
    fc.webUrl({ withQueryParameters: true, withFragments: true }),
    fc
      .tuple(
        fc.constantFrom('http://', 'HTTPS://', 'http:', '//', ''),
        fc.string({ unit: fc.constantFrom('a', 'B', '.', '%', '2', 'e', 'F', '/', '?', '&', '=', '#', '[', ':', '@', 'é', ' ', '\\'), maxLength: 40 }),
      )
      .map(([a, b]) => a + b),
  ];
  for (const arb of arbitraries) {
    fc.assert(
      fc.property(arb, fc.option(fc.webUrl(), { nil: undefined }), (input, base) => {
        const r = canonicalize(input, base);
        if (r.ok) {
          assert.ok(r.url.length <= MAX_URL_LENGTH);
          assert.match(r.url, /^https?:\/\/[^/?#]+\/[^#]*$/);
          const again = canonicalize(r.url);
          assert.ok(again.ok, `re-canonicalising ${r.url} failed: ${JSON.stringify(again)}`);
          assert.equal(again.url, r.url);
          assert.equal(again.host, r.host);
        } else {
          assert.ok(['invalid_url', 'unsupported_scheme', 'too_long', 'invalid_host'].includes(r.reason));
        }
      }),
      { numRuns: 500 },
    );
  }
  // Non-string input from untyped callers
  assert.equal(canonicalize(undefined as unknown as string).ok, false);
  assert.equal(canonicalize(42 as unknown as string).ok, false);
  assert.equal(canonicalize('http://a.com/', 7 as unknown as string).ok, false);
});

test('canonicalize: a path starting with `//` whose dot segments the parser left is resolved, and canonical twice is canonical once (found by the hostile-input property test)', () => {
  for (const input of ['http://example.com//.a/.#', 'http://example.com//.a/./b', 'http://example.com//x/..']) {
    const once = canonicalize(input);
    assert.ok(once.ok, input);
    const twice = canonicalize(once.url);
    assert.ok(twice.ok);
    assert.equal(twice.url, once.url, input);
  }
  const r = canonicalize('http://example.com//.a/.');
  assert.equal(r.ok && r.url, 'http://example.com/.a/');
});
