import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkScope, modeDecides, parsePattern, registrableDomainOf, type ScopedUrl, type ScopeMode, type ScopeRules } from '../../stages/normalize/scope.js';
import { lookupKeys, prefixesOf, prefixKey, seedScopeKeys, urlPrefixOf } from '../../stages/normalize/scope-keys.js';
import { canonicalize } from '../../stages/normalize/canonical-url.js';

test('registrableDomainOf', () => {
  const cases: [string, string][] = [
    ['example.com', 'example.com'],
    ['www.example.com', 'example.com'],
    ['a.b.c.example.com', 'example.com'],
    ['WWW.Example.COM', 'example.com'],
    ['www.example.com.', 'example.com'],
    ['www.example.co.uk', 'example.co.uk'],
    ['example.co.uk', 'example.co.uk'],
    ['site.test', 'site.test'], // unknown TLD
    ['a.b.site.test', 'site.test'],
    ['alice.github.io', 'alice.github.io'], // private suffix: each user is its own site
    ['github.io', 'github.io'], // a bare suffix is its own registrable domain
    ['xn--bcher-kva.de', 'xn--bcher-kva.de'],
    ['shop.xn--bcher-kva.de', 'xn--bcher-kva.de'],
    ['_dmarc.example.com', 'example.com'],
    ['localhost', 'localhost'],
    ['127.0.0.1', '127.0.0.1'], // IPs are their own registrable domain
    ['10.0.0.255', '10.0.0.255'],
    ['[::1]', '[::1]'],
    ['[2001:db8::1]', '[2001:db8::1]'],
    ['', ''],
  ];
  for (const [host, expected] of cases) assert.equal(registrableDomainOf(host), expected, host);
});

function rules(overrides: Partial<ScopeRules> = {}): ScopeRules {
  return { mode: 'domain', include: [], exclude: [], maxDepth: 3, ...overrides };
}

const at = (url: string): ScopedUrl => {
  const c = canonicalize(url);
  assert.ok(c.ok, url);
  return c;
};

interface ScopeCase {
  name: string;
  url: string;
  /** whether the scope mode takes the URL in (its seeds' domain, host or prefix holds it) */
  inMode: boolean;
  depth?: number;
  rules: ScopeRules;
  expected: true | 'out_of_scope' | 'excluded_pattern' | 'not_included' | 'max_depth';
}

const scopeCases: ScopeCase[] = [
  { name: 'in the mode', url: 'https://example.com/', inMode: true, rules: rules(), expected: true },
  { name: 'outside the mode', url: 'https://example.org/', inMode: false, rules: rules(), expected: 'out_of_scope' },
  { name: 'open takes any host', url: 'https://example.org/', inMode: false, rules: rules({ mode: 'open' }), expected: true },
  // exclude
  { name: 'excluded by glob', url: 'https://example.com/private/x', inMode: true, rules: rules({ exclude: [parsePattern('*/private/*')] }), expected: 'excluded_pattern' },
  { name: 'excluded by regex', url: 'https://example.com/a.pdf', inMode: true, rules: rules({ exclude: [parsePattern('/\\.pdf$/i')] }), expected: 'excluded_pattern' },
  { name: 'not excluded', url: 'https://example.com/a.html', inMode: true, rules: rules({ exclude: [parsePattern('/\\.pdf$/i'), parsePattern('*/private/*')] }), expected: true },
  { name: 'exclude narrows an open crawl', url: 'https://example.org/private/x', inMode: true, rules: rules({ mode: 'open', exclude: [parsePattern('*/private/*')] }), expected: 'excluded_pattern' },
  // include
  { name: 'included by glob', url: 'https://example.com/docs/intro', inMode: true, rules: rules({ include: [parsePattern('https://example.com/docs/*')] }), expected: true },
  { name: 'include narrows within the mode', url: 'https://example.com/blog/post', inMode: true, rules: rules({ include: [parsePattern('https://example.com/docs/*')] }), expected: 'not_included' },
  { name: 'included by one of several', url: 'https://example.com/blog/post', inMode: true, rules: rules({ include: [parsePattern('https://example.com/docs/*'), parsePattern('/\\/blog\\//')] }), expected: true },
  { name: 'include widens beyond the mode', url: 'https://docs.example.org/api', inMode: false, rules: rules({ include: [parsePattern('*.example.org/*')] }), expected: true },
  { name: 'include widens beyond host mode', url: 'https://other.example.com/', inMode: false, rules: rules({ mode: 'host', include: [parsePattern('*.example.com/*')] }), expected: true },
  { name: 'include narrows an open crawl', url: 'https://example.net/', inMode: true, rules: rules({ mode: 'open', include: [parsePattern('*.example.org/*')] }), expected: 'not_included' },
  { name: 'with include, a URL outside both is not_included', url: 'https://example.org/blog', inMode: false, rules: rules({ include: [parsePattern('*/docs/*')] }), expected: 'not_included' },
  { name: 'exclude wins over include', url: 'https://example.com/docs/private/x', inMode: true, rules: rules({ include: [parsePattern('*/docs/*')], exclude: [parsePattern('*/private/*')] }), expected: 'excluded_pattern' },
  { name: 'exclude wins over a widening include', url: 'https://example.org/docs/private/x', inMode: false, rules: rules({ include: [parsePattern('*/docs/*')], exclude: [parsePattern('*/private/*')] }), expected: 'excluded_pattern' },
  // depth
  { name: 'depth 0', url: 'https://example.com/', inMode: true, depth: 0, rules: rules(), expected: true },
  { name: 'depth == maxDepth', url: 'https://example.com/', inMode: true, depth: 3, rules: rules(), expected: true },
  { name: 'depth > maxDepth', url: 'https://example.com/', inMode: true, depth: 4, rules: rules(), expected: 'max_depth' },
  { name: 'depth applies to an open crawl', url: 'https://example.org/', inMode: false, depth: 4, rules: rules({ mode: 'open' }), expected: 'max_depth' },
  { name: 'depth applies to an included URL', url: 'https://example.org/docs/', inMode: false, depth: 4, rules: rules({ include: [parsePattern('*/docs/*')] }), expected: 'max_depth' },
  { name: 'maxDepth 0 allows only seeds', url: 'https://example.com/', inMode: true, depth: 1, rules: rules({ maxDepth: 0 }), expected: 'max_depth' },
  { name: 'maxDepth Infinity', url: 'https://example.com/', inMode: true, depth: 1e6, rules: rules({ maxDepth: Infinity }), expected: true },
];

for (const c of scopeCases) {
  test(`checkScope: ${c.name}`, () => {
    const r = checkScope(at(c.url), c.depth ?? 1, c.rules, c.inMode);
    if (c.expected === true) {
      assert.deepEqual(r, { ok: true });
    } else {
      assert.equal(r.ok, false, `expected ${c.expected}, got ${JSON.stringify(r)}`);
      if (!r.ok) {
        assert.equal(r.reason, c.expected, r.detail);
        assert.ok(r.detail.length > 0);
      }
    }
  });
}

test('checkScope: out_of_scope says which mode refused', () => {
  const u = at('https://www.example.org/a');
  for (const [mode, says] of [['domain', /registrable domain "example.org" is not a seed's/], ['host', /host "www.example.org" is not a seed's host/], ['prefix', /under no seed's prefix/]] as const) {
    const r = checkScope(u, 1, rules({ mode }), false);
    assert.ok(!r.ok && r.reason === 'out_of_scope');
    assert.match(r.detail, says);
  }
});

test('modeDecides: only without include patterns, and not for an excluded URL', () => {
  assert.equal(modeDecides('https://a.example/x', rules()), true);
  assert.equal(modeDecides('https://a.example/x', rules({ include: [parsePattern('*')] })), false);
  assert.equal(modeDecides('https://a.example/x', rules({ exclude: [parsePattern('*/x')] })), false);
});

test('scope keys: a seed registers its domain, host and prefix; each mode looks up its own kind', () => {
  const seed = at('https://www.example.co.uk/docs/guide/intro.html?x=/a/');
  assert.equal(urlPrefixOf(seed.url), 'https://www.example.co.uk/docs/guide/');
  const keys = seedScopeKeys(seed);
  assert.deepEqual(keys.slice(0, 2), ['example.co.uk', 'host=www.example.co.uk']);
  const inMode = (mode: ScopeMode, url: string) => lookupKeys(mode, at(url)).some((k) => keys.includes(k));
  // domain: any host of the registrable domain
  assert.equal(inMode('domain', 'https://shop.example.co.uk/'), true);
  assert.equal(inMode('domain', 'https://example.com/'), false);
  // host: that host only, any port and scheme
  assert.equal(inMode('host', 'http://www.example.co.uk:8080/x'), true);
  assert.equal(inMode('host', 'https://shop.example.co.uk/'), false);
  // prefix: the seed's origin and directory, and what lies under it
  assert.equal(inMode('prefix', 'https://www.example.co.uk/docs/guide/'), true);
  assert.equal(inMode('prefix', 'https://www.example.co.uk/docs/guide/a/b.html?q=1'), true);
  assert.equal(inMode('prefix', 'https://www.example.co.uk/docs/other.html'), false);
  assert.equal(inMode('prefix', 'https://www.example.co.uk/docs/guidebook/'), false);
  assert.equal(inMode('prefix', 'http://www.example.co.uk/docs/guide/'), false, 'another scheme is another origin');
  assert.equal(inMode('prefix', 'https://www.example.co.uk/x?to=/docs/guide/'), false, 'the query is not the path');
  // open looks nothing up
  assert.deepEqual(lookupKeys('open', seed), []);
  // keys fit a KV key whatever the path holds
  assert.match(prefixKey('https://a.example/..././'), /^prefix=[0-9a-f]{32}$/);
});

test('prefixesOf: the root, then each directory down to the URL\'s own', () => {
  assert.deepEqual(prefixesOf('https://a.example:8443/x/y/z.html'), ['https://a.example:8443/', 'https://a.example:8443/x/', 'https://a.example:8443/x/y/']);
  assert.deepEqual(prefixesOf('https://a.example/'), ['https://a.example/']);
});

test('checkScope: a global regex gives the same answer every time', () => {
  const r = rules({ include: [/docs/g] });
  for (let i = 0; i < 3; i++) assert.deepEqual(checkScope(at('https://example.com/docs/'), 0, r, true), { ok: true });
});

interface PatternCase {
  pattern: string;
  matches: string[];
  rejects: string[];
}

const patternCases: PatternCase[] = [
  {
    pattern: '*.example.com/*',
    matches: ['https://www.example.com/', 'http://a.b.example.com/x?y=1', 'www.example.com/'],
    rejects: ['https://example.com/', 'https://www.example.org/', 'https://www.example.com'],
  },
  {
    pattern: 'https://example.com/docs/*',
    matches: ['https://example.com/docs/', 'https://example.com/docs/a/b?c=d'],
    rejects: ['http://example.com/docs/a', 'https://example.com/doc', 'https://example.com/blog/docs/a', 'https://www.example.com/docs/a'],
  },
  {
    pattern: 'example.com/docs/*',
    matches: ['https://example.com/docs/a', 'http://example.com/docs/a'],
    rejects: ['https://example.com/blog', 'https://notexample.com/docs/a', 'https://fakeexample.com/docs/a'],
  },
  {
    pattern: '/docs/*',
    matches: ['https://example.com/docs/a', 'http://other.org:8080/docs/'],
    rejects: ['https://example.com/x/docs/a', 'https://example.com/?q=/docs/'],
  },
  {
    pattern: 'https://example.com/a?b=*', // `?` and `.` are literal in a glob
    matches: ['https://example.com/a?b=1'],
    rejects: ['https://example.com/ab=1', 'https://exampleXcom/a?b=1'],
  },
  {
    pattern: '*',
    matches: ['https://example.com/', ''],
    rejects: [],
  },
  {
    pattern: '/\\/(login|logout)\\b/',
    matches: ['https://example.com/login', 'https://example.com/a/logout?x'],
    rejects: ['https://example.com/loginx', 'https://example.com/LOGIN'],
  },
  {
    pattern: '/\\/LOGIN/i',
    matches: ['https://example.com/login'],
    rejects: ['https://example.com/log-in'],
  },
  {
    pattern: '  /^https:\\/\\/example\\.com\\/$/  ', // surrounding whitespace ignored
    matches: ['https://example.com/'],
    rejects: ['https://example.com/a'],
  },
];

for (const c of patternCases) {
  test(`parsePattern: ${c.pattern.trim()}`, () => {
    const re = parsePattern(c.pattern);
    for (const s of c.matches) assert.equal(re.test(s), true, `${re} should match ${s}`);
    for (const s of c.rejects) assert.equal(re.test(s), false, `${re} should not match ${s}`);
  });
}

test('parsePattern: g and y flags are dropped', () => {
  const re = parsePattern('/docs/gyi');
  assert.equal(re.flags, 'i');
});

test('parsePattern: clear errors', () => {
  assert.throws(() => parsePattern('/(unclosed/'), (err: unknown) => {
    assert.ok(err instanceof Error);
    assert.match(err.message, /invalid scope pattern "\/\(unclosed\/": not a valid regular expression/);
    return true;
  });
  assert.throws(() => parsePattern('/a/q'), /invalid scope pattern "\/a\/q": not a valid regular expression/);
  assert.throws(() => parsePattern('   '), /empty pattern/);
});

test('parsePattern + checkScope with canonical URLs end to end', async () => {
  const { canonicalize } = await import('../../stages/normalize/canonical-url.js');
  const r = canonicalize('HTTPS://Docs.Example.com:443/guide/../api/?utm_source=x#top');
  assert.ok(r.ok);
  assert.equal(r.url, 'https://docs.example.com/api/');
  const scope = rules({ include: [parsePattern('*.example.com/api/*')], exclude: [parsePattern('/\\?print=/')] });
  assert.deepEqual(checkScope(r, 2, scope, true), { ok: true });
});
