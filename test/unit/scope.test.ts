import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkScope, parsePattern, registrableDomainOf, type ScopeRules } from '../../stages/normalize/scope.js';

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
  return {
    allowedDomains: new Set(['example.com', 'site.test', '127.0.0.1']),
    include: [],
    exclude: [],
    maxDepth: 3,
    ...overrides,
  };
}

interface ScopeCase {
  name: string;
  url: string;
  domain: string;
  depth?: number;
  rules: ScopeRules;
  expected: true | 'out_of_scope' | 'excluded_pattern' | 'not_included' | 'max_depth';
}

const scopeCases: ScopeCase[] = [
  { name: 'allowed domain', url: 'https://example.com/', domain: 'example.com', rules: rules(), expected: true },
  { name: 'subdomain of allowed domain', url: 'https://blog.example.com/a', domain: 'example.com', rules: rules(), expected: true },
  { name: 'unknown-TLD domain', url: 'http://a.site.test/', domain: 'site.test', rules: rules(), expected: true },
  { name: 'IP host', url: 'http://127.0.0.1:8080/', domain: '127.0.0.1', rules: rules(), expected: true },
  { name: 'other domain', url: 'https://example.org/', domain: 'example.org', rules: rules(), expected: 'out_of_scope' },
  { name: 'look-alike domain', url: 'https://notexample.com/', domain: 'notexample.com', rules: rules(), expected: 'out_of_scope' },
  { name: 'domain compared case-insensitively', url: 'https://example.com/', domain: 'EXAMPLE.com', rules: rules(), expected: true },
  { name: 'empty allowed set fails closed', url: 'https://example.com/', domain: 'example.com', rules: rules({ allowedDomains: new Set() }), expected: 'out_of_scope' },
  // exclude
  {
    name: 'excluded by glob',
    url: 'https://example.com/private/x',
    domain: 'example.com',
    rules: rules({ exclude: [parsePattern('*/private/*')] }),
    expected: 'excluded_pattern',
  },
  {
    name: 'excluded by regex',
    url: 'https://example.com/a.pdf',
    domain: 'example.com',
    rules: rules({ exclude: [parsePattern('/\\.pdf$/i')] }),
    expected: 'excluded_pattern',
  },
  {
    name: 'not excluded',
    url: 'https://example.com/a.html',
    domain: 'example.com',
    rules: rules({ exclude: [parsePattern('/\\.pdf$/i'), parsePattern('*/private/*')] }),
    expected: true,
  },
  // include
  {
    name: 'included by glob',
    url: 'https://example.com/docs/intro',
    domain: 'example.com',
    rules: rules({ include: [parsePattern('https://example.com/docs/*')] }),
    expected: true,
  },
  {
    name: 'not included',
    url: 'https://example.com/blog/post',
    domain: 'example.com',
    rules: rules({ include: [parsePattern('https://example.com/docs/*')] }),
    expected: 'not_included',
  },
  {
    name: 'included by one of several',
    url: 'https://example.com/blog/post',
    domain: 'example.com',
    rules: rules({ include: [parsePattern('https://example.com/docs/*'), parsePattern('/\\/blog\\//')] }),
    expected: true,
  },
  {
    name: 'exclude wins over include',
    url: 'https://example.com/docs/private/x',
    domain: 'example.com',
    rules: rules({ include: [parsePattern('*/docs/*')], exclude: [parsePattern('*/private/*')] }),
    expected: 'excluded_pattern',
  },
  {
    name: 'scope checked before patterns',
    url: 'https://example.org/docs/x',
    domain: 'example.org',
    rules: rules({ include: [parsePattern('*/docs/*')] }),
    expected: 'out_of_scope',
  },
  // depth
  { name: 'depth 0', url: 'https://example.com/', domain: 'example.com', depth: 0, rules: rules(), expected: true },
  { name: 'depth == maxDepth', url: 'https://example.com/', domain: 'example.com', depth: 3, rules: rules(), expected: true },
  { name: 'depth > maxDepth', url: 'https://example.com/', domain: 'example.com', depth: 4, rules: rules(), expected: 'max_depth' },
  { name: 'maxDepth 0 allows only seeds', url: 'https://example.com/', domain: 'example.com', depth: 1, rules: rules({ maxDepth: 0 }), expected: 'max_depth' },
  { name: 'maxDepth Infinity', url: 'https://example.com/', domain: 'example.com', depth: 1e6, rules: rules({ maxDepth: Infinity }), expected: true },
];

for (const c of scopeCases) {
  test(`checkScope: ${c.name}`, () => {
    const r = checkScope(c.url, c.domain, c.depth ?? 1, c.rules);
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

test('checkScope: a global regex gives the same answer every time', () => {
  const r = rules({ include: [/docs/g] });
  for (let i = 0; i < 3; i++) assert.deepEqual(checkScope('https://example.com/docs/', 'example.com', 0, r), { ok: true });
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
  assert.deepEqual(checkScope(r.url, r.registrableDomain, 2, scope), { ok: true });
});
