/**
 * Property-based tests of the normalize stage on hostile input: random strings and URL-like
 * strings (webUrl and mutated variants, unicode, control characters, percent-escapes, huge
 * ports, IPv6 literals, userinfo, empty hosts, other schemes, relative paths, very long
 * strings) as discovered links and as seeds.
 *
 * The contract checked: the handler never throws; every link gets exactly one outcome (a
 * candidate on crawl.normalized.* or a `filtered` outcome with a reason on crawl.outcomes.*),
 * except links that canonicalise to a URL already seen in the same message; candidates are
 * canonical (canonicalize is idempotent on them) and at most 2048 characters; every emitted
 * message decodes with its schema.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { z } from 'zod';
import { decodeNormalizeInput, handleNormalize, type NormalizeInput } from '../../stages/normalize/handle.js';
import { parsePattern } from '../../stages/normalize/scope.js';
import { canonicalize, MAX_URL_LENGTH } from '../../stages/normalize/canonical-url.js';
import { partitionOf } from '../../pipeline/partition.js';
import type { Disposition } from '../../pipeline/stage.js';
import {
  decodeCandidates,
  MAX_URLS_PER_BATCH,
  decodeOutcome,
  encodeDiscoveredLinks,
  encodeSeed,
  decodeMessage,
  encodeMessage,
  SchemaError,
  type CandidateUrl,
  type DiscoveredLinks,
  type UrlOutcome,
} from '../../schemas/index.js';
import { createFakeContext, emitted, onSubject, stageInput, type FakeContext } from '../support/fake-context.js';

// ---------------------------------------------------------------------------------------------
// Arbitraries

/** a lone UTF-16 surrogate (not valid Unicode; msgpack and URL parsers must cope) */
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
/** C0 controls, DEL, C1 controls and odd whitespace */
const controlChar = fc.oneof(
  fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
  fc.constantFrom('\x7f', '\x85', '\xa0', '\u2028', '\u2029', '\ufeff', '\u200b', '\u3000', '\ufffd'),
);
/** characters that mean something in a URL, or that a URL parser treats specially */
const urlSpecialChar = fc.constantFrom(
  '%', '%%', '%0', '%zz', '%G1', '%00', '%2F', '%2f', '%2e', '%2E%2E', '%41', '%7E', '%e2%82%ac', '%C3%A9', '%ff', '%FE%FF',
  ' ', '\t', '\n', '\r', '\\', '/', '//', '?', '#', '&', '=', '@', ':', ';', '[', ']', '{', '}', '|', '^', '`', '"', "'", '<', '>',
  '.', '..', '~', '+', '*', '!', '$', '(', ')', ',',
);
/** any UTF-16 string: full unicode, lone surrogates, controls and URL punctuation */
const hostileString = (maxLength = 40) =>
  fc.string({
    unit: fc.oneof(
      { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
      { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
      { weight: 1, arbitrary: loneSurrogate },
      { weight: 1, arbitrary: controlChar },
      { weight: 2, arbitrary: urlSpecialChar },
    ),
    maxLength,
  });

const scheme = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('http', 'https') },
  { weight: 2, arbitrary: fc.constantFrom('HTTP', 'HtTpS', 'https ', ' http', 'h\ttp', 'http\n') },
  { weight: 3, arbitrary: fc.constantFrom('javascript', 'data', 'mailto', 'ftp', 'file', 'ws', 'wss', 'blob', 'about', 'tel', 'vbscript', 'urn', 'x-y+z.1', 'a') },
  { weight: 1, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: hostileString(8) },
);
const schemeSep = fc.constantFrom('://', '://', '://', ':', ':/', ':///', ':\\\\', '//', '', ':////');

const label63 = 'a'.repeat(63);
const host = fc.oneof(
  { weight: 5, arbitrary: fc.domain() },
  { weight: 4, arbitrary: fc.constantFrom('example.com', 'www.example.com', 'EXAMPLE.COM', 'Sub.Example.Com.', 'a.b.c.example.com', 'example.com.', 'example..com') },
  { weight: 2, arbitrary: fc.ipV4() },
  { weight: 2, arbitrary: fc.ipV6().map((ip) => `[${ip}]`) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '', ' ', '.', '..', '[::1]', '[::1', '::1]', '[]', '[::ffff:192.0.2.1]', '[fe80::1%25eth0]', '[v1.x]', '0x7f.1', '127.1',
      '2130706433', '0177.0.0.1', '256.256.256.256', '1.2.3.4.5', 'localhost', 'LOCALHOST.', 'bücher.example', 'xn--bcher-kva.example',
      'xn--', 'xn--zz', '例え.テスト', 'ex%41mple.com', 'ex%zzmple.com', 'exa mple.com', 'a_b.example.com', '-a-.example.com',
      `${label63}.com`, `${label63}a.com`, `${Array(5).fill(label63).join('.')}.com`, 'example.com\u0000', 'ex\u00adample.com',
      'ｅｘａｍｐｌｅ.com', 'example.com:80@evil.com', 'ex\\ample.com', 'ex|ample.com', '%', '\u2024.com', 'a..b', '*.example.com',
    ),
  },
  { weight: 1, arbitrary: hostileString(20) },
);
const userinfo = fc.oneof(
  { weight: 6, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.constantFrom('user@', 'user:pass@', ':@', '@', '@@', 'a:b:c@', 'us%20er:p%40ss@', 'ü:ß@', 'user:pass@host@') },
  { weight: 1, arbitrary: hostileString(10).map((s) => `${s}@`) },
);
const port = fc.oneof(
  { weight: 6, arbitrary: fc.constant('') },
  { weight: 2, arbitrary: fc.constantFrom(':', ':80', ':443', ':0', ':00080', ':65535', ':65536', ':99999999999999999999', ':-1', ':abc', ':8080:9090', ': 80') },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 200_000 }).map((p) => `:${p}`) },
);
const pathSegment = fc.oneof(
  { weight: 4, arbitrary: fc.webSegment() },
  { weight: 2, arbitrary: fc.constantFrom('', '.', '..', '%2e', '%2E%2e', '.%2e', 'a b', 'a%20b', 'a+b', 'é', '%C3%A9', '%', '%zz', '%4', '%%41', '☃', '𝌆', 'index.html', 'a;b=c') },
  { weight: 2, arbitrary: hostileString(15) },
);
const path = fc.oneof(
  { weight: 8, arbitrary: fc.array(pathSegment, { maxLength: 6 }).map((segs) => (segs.length ? '/' + segs.join('/') : '')) },
  // very long paths: around and beyond the 2048-character limit, and beyond the 64 KiB input cap
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 70_000 }).map((n) => '/' + 'a'.repeat(n)) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 1, max: 800 }), fc.constantFrom('é', '%zz', ' ', '|', '%41')).map(([n, s]) => '/' + s.repeat(n)) },
);
const queryParam = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(fc.webSegment(), fc.webSegment()).map(([k, v]) => `${k}=${v}`) },
  { weight: 2, arbitrary: fc.constantFrom('utm_source=x', 'UTM_Medium=y', 'utm_=', 'fbclid=1', 'gclid', '%75tm_source=x', '_ga=1', '=', '==', '=x', 'a=', 'a', '&', 'a=b=c', 'a=%zz', 'b=%20', 'q=a+b', 'x[]=1', 'é=ü') },
  { weight: 1, arbitrary: fc.tuple(hostileString(8), hostileString(8)).map(([k, v]) => `${k}=${v}`) },
);
const query = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.constant('?') },
  { weight: 3, arbitrary: fc.array(queryParam, { minLength: 1, maxLength: 6 }).map((ps) => '?' + ps.join('&')) },
);
const fragment = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.webFragments().map((f) => `#${f}`) },
  { weight: 1, arbitrary: hostileString(10).map((f) => `#${f}`) },
);

/** assembled from parts, each part possibly hostile */
const composedUrl = fc
  .tuple(scheme, schemeSep, userinfo, host, port, path, query, fragment)
  .map(([s, sep, ui, h, p, pa, q, f]) => `${s}${sep}${ui}${h}${p}${pa}${q}${f}`);

const webUrl = fc.webUrl({
  validSchemes: ['http', 'https'],
  authoritySettings: { withIPv4: true, withIPv6: true, withIPv4Extended: true, withUserInfo: true, withPort: true },
  withQueryParameters: true,
  withFragments: true,
});

/** a valid URL with characters inserted, replaced or deleted at random places */
const mutatedUrl = fc
  .tuple(
    fc.oneof(webUrl, composedUrl),
    fc.array(
      fc.record({
        at: fc.nat(),
        op: fc.constantFrom('insert', 'replace', 'delete'),
        ch: fc.oneof(urlSpecialChar, controlChar, loneSurrogate, fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
      }),
      { minLength: 1, maxLength: 4 },
    ),
  )
  .map(([url, edits]) => {
    let s = url;
    for (const e of edits) {
      const i = s.length === 0 ? 0 : e.at % (s.length + 1);
      if (e.op === 'insert') s = s.slice(0, i) + e.ch + s.slice(i);
      else if (e.op === 'replace') s = s.slice(0, i) + e.ch + s.slice(i + 1);
      else s = s.slice(0, i) + s.slice(i + 1);
    }
    return s;
  });

/** relative references and other non-absolute forms */
const relativeRef = fc.oneof(
  fc.constantFrom('/', '/a/b', '../x', './', '.', '?q=1', '#top', 'a/b', '//', '///', '//example.com/x', '//[::1]:8080/', 'example.com', 'example.com/x', 'localhost:8080', 'www.example.com:99999/', '\\\\example.com\\x'),
  fc.tuple(fc.constantFrom('', '/', './', '../', '//'), fc.webPath()).map(([a, b]) => a + b),
);

/** URL-shaped input in scope of the seeded domain, so the candidate path is exercised too */
const inScopeUrl = fc
  .tuple(
    fc.constantFrom('http://', 'https://', 'HTTPS://', '//', '', 'https://user:pw@'),
    fc.constantFrom('example.com', 'www.example.com', 'EXAMPLE.com.', 'a.b.example.com', 'example.com:443', 'example.com:8443', 'example.com:65536'),
    path,
    query,
    fragment,
  )
  .map(([s, h, p, q, f]) => `${s}${h}${p}${q}${f}`);

const anyLink = fc.oneof(
  { weight: 3, arbitrary: webUrl },
  { weight: 4, arbitrary: composedUrl },
  { weight: 3, arbitrary: mutatedUrl },
  { weight: 3, arbitrary: inScopeUrl },
  { weight: 1, arbitrary: relativeRef },
  { weight: 2, arbitrary: hostileString(80) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
);

const includePatterns = fc.constantFrom<string[]>([], [], [], ['https://example.com/*'], ['/a*'], ['/[a-m]/i'], ['*example.com/*', '/%/']);
const excludePatterns = fc.constantFrom<string[]>([], [], [], ['/private/*'], ['/\\?/'], ['*.example.com/*'], ['/[^\\x00-\\x7f]/']);

// ---------------------------------------------------------------------------------------------
// Helpers

const FILTER_REASON = /^(invalid_url|unsupported_scheme|too_long|invalid_host|out_of_scope|excluded_pattern|not_included|max_depth|trap_repeated_segments): \S/;

/** handled and settled as the runner does when its outputs are published: the after-publish step runs */
async function run(ctx: FakeContext, input: NormalizeInput): Promise<Disposition> {
  const out = await handleNormalize(stageInput(input), ctx);
  if (out.kind === 'emit') await out.afterPublish?.([]);
  return out;
}

interface Decoded {
  candidates: CandidateUrl[];
  filtered: UrlOutcome[];
}

/**
 * Checks what holds for every emitted message (subject, msgId, decodability, candidate
 * canonicity and length, filtered reason) and returns the decoded messages.
 */
function checkEmitted(ctx: FakeContext, out: Disposition, depth: number): Decoded {
  const candidates: CandidateUrl[] = [];
  const filtered: UrlOutcome[] = [];
  for (const e of emitted(out)) {
    if (onSubject(e.subject, 'crawl.normalized')) {
      const batch = decodeCandidates(e.data);
      assert.ok(batch.length >= 1 && batch.length <= MAX_URLS_PER_BATCH, `a message holds ${batch.length} candidates`);
      for (const c of batch) {
        assert.ok(c.url.length <= MAX_URL_LENGTH, `candidate is ${c.url.length} characters long`);
        const again = canonicalize(c.url);
        assert.ok(again.ok, `candidate ${JSON.stringify(c.url)} is not canonicalizable: ${again.ok ? '' : again.detail}`);
        assert.equal(again.url, c.url, 'canonicalize is idempotent on a candidate');
        assert.equal(again.host, c.host);
        assert.equal(again.registrableDomain, c.domain);
        assert.ok(/^https?:\/\/[^/?#]+\/[^#\s]*$/.test(c.url), `candidate ${JSON.stringify(c.url)} is an absolute http(s) URL without fragment or whitespace`);
        assert.ok(/^[\x21-\x7e]*$/.test(c.url), `candidate ${JSON.stringify(c.url)} is printable ASCII`);
        assert.equal(c.depth, depth);
        assert.equal(e.subject, `crawl.normalized.${partitionOf(c.host, ctx.settings.partitions)}`);
        candidates.push(c);
      }
    } else if (onSubject(e.subject, 'crawl.outcomes')) {
      const o = decodeOutcome(e.data);
      assert.equal(o.outcome, 'filtered');
      assert.ok(o.reason.length > 0, 'a filtered outcome has a reason');
      assert.match(o.reason, FILTER_REASON);
      assert.ok(e.msgId, 'a filtered outcome carries a msgId');
      assert.equal(o.depth, depth);
      assert.equal(e.subject, `crawl.outcomes.${partitionOf(o.host || 'invalid', ctx.settings.partitions)}`);
      filtered.push(o);
    } else {
      assert.fail(`unexpected subject ${e.subject}`);
    }
  }
  return { candidates, filtered };
}

/**
 * A string as it comes out of a msgpack round trip. Only lone surrogates change: msgpackr
 * writes a short string's lone surrogate as 3 bytes (ED A0 80 …) that decode to 3 U+FFFD, a
 * long string's as EF BF BD (one U+FFFD).
 */
const wire = (s: string) => decodeMessage(z.string(), encodeMessage(s), 'string');

/** what the link property saw, across all its runs: proof that the arbitraries reach every branch */
const coverage = new Map<string, number>();
const note = (key: string) => coverage.set(key, (coverage.get(key) ?? 0) + 1);

// every property runs its full number of runs (no time limit that would end it early and pass)
const opts = (numRuns: number) => ({ numRuns });

// ---------------------------------------------------------------------------------------------

describe('normalize: properties (hostile input)', () => {
  test('canonicalize never throws, and an accepted URL is canonical, short and idempotent', () => {
    fc.assert(
      fc.property(anyLink, fc.option(fc.oneof(webUrl, anyLink), { nil: undefined }), (input, base) => {
        const r = canonicalize(input, base);
        if (!r.ok) {
          assert.ok(r.detail.length > 0);
          return;
        }
        assert.ok(r.url.length <= MAX_URL_LENGTH);
        const again = canonicalize(r.url);
        assert.ok(again.ok && again.url === r.url, `not idempotent: ${JSON.stringify(r.url)} -> ${JSON.stringify(again)}`);
      }),
      opts(2000),
    );
  });

  test('links: every link gets exactly one outcome (candidate or filtered with a reason), and every message decodes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(anyLink, { maxLength: 24 }),
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: 0, max: 6 }),
        fc.constantFrom<DiscoveredLinks['via']>('link', 'redirect'),
        includePatterns,
        excludePatterns,
        fc.option(fc.array(anyLink, { maxLength: 3 }), { nil: undefined }),
        fc.boolean(),
        async (urls, depth, maxDepth, via, include, exclude, redirectChain, overTheWire) => {
          const ctx = createFakeContext({ settings: { maxDepth, include, exclude, partitions: 7 } });
          // the seed puts example.com in scope (fresh context: no recent URLs, empty scope otherwise)
          await run(ctx, { kind: 'seed', seed: { url: 'https://example.com/' } });
          const msg: DiscoveredLinks = {
            v: 1,
            source_url: 'https://example.com/src',
            depth,
            via,
            links: urls.map((url) => ({ url })),
            ...(redirectChain ? { redirect_chain: redirectChain } : {}),
          };
          // the runner hands the stage what its decoder made of the bytes; also drive it directly
          const input: NormalizeInput = overTheWire ? decodeNormalizeInput('crawl.links.3', encodeDiscoveredLinks(msg)) : { kind: 'links', links: msg };
          const links = input.kind === 'links' ? input.links.links : assert.fail('decoded as a seed');
          assert.equal(links.length, urls.length, 'decoding keeps every link');

          const out = await run(ctx, input);
          const { candidates, filtered } = checkEmitted(ctx, out, depth);
          if (candidates.length > 0) note('candidate');
          for (const o of filtered) note(o.reason.slice(0, o.reason.indexOf(':')));

          // expected: one outcome per link, but one per canonical URL (the first link wins)
          const expected: Array<{ url: string; canonical: boolean }> = [];
          const seen = new Set<string>();
          for (const l of links) {
            const r = canonicalize(l.url);
            if (!r.ok) expected.push({ url: wire(l.url), canonical: false });
            else if (!seen.has(r.url)) {
              seen.add(r.url);
              expected.push({ url: r.url, canonical: true });
            }
          }
          const got = [...candidates.map((c) => c.url), ...filtered.map((o) => o.url)].sort();
          assert.deepEqual(got, expected.map((e) => e.url).sort(), 'one outcome per (canonical) link, none lost, none invented');
          const candidateUrls = new Set(candidates.map((c) => c.url));
          const filteredUrls = new Set(filtered.map((o) => o.url));
          for (const e of expected) {
            if (!e.canonical) {
              assert.ok(filteredUrls.has(e.url), `invalid link ${JSON.stringify(e.url)} is filtered under its own URL`);
              assert.ok(!candidateUrls.has(e.url));
            } else {
              assert.ok(candidateUrls.has(e.url) !== filteredUrls.has(e.url), `exactly one of candidate/filtered for ${e.url}`);
            }
          }
          for (const c of candidates) {
            assert.equal(c.source_url, msg.source_url);
            assert.equal(c.via, via);
            // include patterns decide on their own, wherever the host; without them, only the seeded domain is in scope
            if (include.length === 0) assert.equal(c.domain, 'example.com', 'only the seeded domain is in scope');
            else assert.ok(include.some((p) => parsePattern(p).test(c.url)), `${c.url} matches an include pattern`);
            assert.ok(depth <= maxDepth);
            if (redirectChain) assert.deepEqual(c.redirect_chain, redirectChain.map(wire));
          }
          // a filtered URL that did canonicalise is reported under its canonical form, with its host
          for (const o of filtered) {
            if (candidateUrls.has(o.url)) assert.fail('both candidate and filtered');
            if (seen.has(o.url)) assert.ok(o.host.length > 0, `filtered canonical URL ${o.url} has its host`);
          }
        },
      ),
      opts(300),
    );
  });

  test('links: the random links reached every outcome (candidate and each filter reason)', (t) => {
    t.diagnostic(JSON.stringify(Object.fromEntries(coverage)));
    for (const key of ['candidate', 'invalid_url', 'unsupported_scheme', 'too_long', 'invalid_host', 'out_of_scope', 'excluded_pattern', 'not_included', 'max_depth']) {
      assert.ok((coverage.get(key) ?? 0) > 0, `no run produced ${key}`);
    }
  });

  test('links: the same message handled twice by one process loses nothing the first time and emits no new candidate the second time', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.oneof(inScopeUrl, anyLink), { maxLength: 16 }), async (urls) => {
        const ctx = createFakeContext();
        await run(ctx, { kind: 'seed', seed: { url: 'https://example.com/' } });
        const input: NormalizeInput = { kind: 'links', links: { v: 1, source_url: 'https://example.com/', depth: 1, via: 'link', links: urls.map((url) => ({ url })) } };
        const first = checkEmitted(ctx, await run(ctx, input), 1);
        const second = checkEmitted(ctx, await run(ctx, input), 1);
        // recent-urls: candidates already forwarded are dropped (the seen-filter has them);
        // filtered outcomes repeat with the same msgId (the server drops the duplicate)
        assert.deepEqual(second.candidates, []);
        assert.deepEqual(second.filtered.map((o) => o.event_id), first.filtered.map((o) => o.event_id));
      }),
      opts(100),
    );
  });

  test('seeds: exactly one outcome (candidate, scope += domain; or filtered with a reason), never a throw', async () => {
    await fc.assert(
      fc.asyncProperty(anyLink, fc.option(fc.integer({ min: 0, max: 10 }), { nil: undefined }), fc.boolean(), async (url, depth, overTheWire) => {
        const ctx = createFakeContext({ settings: { partitions: 5 } });
        let input: NormalizeInput;
        if (overTheWire) {
          // JSON seed, as `crawl seed` publishes it: only an empty URL may be refused (a SchemaError: dead-lettered)
          try {
            input = decodeNormalizeInput('crawl.seeds', encodeSeed(depth === undefined ? { url } : { url, depth }));
          } catch (err) {
            assert.ok(err instanceof SchemaError, `decoding a seed throws only SchemaError, got ${String(err)}`);
            assert.equal(url.length, 0);
            return;
          }
        } else {
          if (url.length === 0) return; // SeedMessage.url is min(1)
          input = { kind: 'seed', seed: depth === undefined ? { url } : { url, depth } };
        }
        const seedUrl = input.kind === 'seed' ? input.seed.url : assert.fail('decoded as links');
        const out = await run(ctx, input);
        const { candidates, filtered } = checkEmitted(ctx, out, depth ?? 0);
        assert.equal(candidates.length + filtered.length, 1, 'exactly one outcome per seed');
        const r = canonicalize(seedUrl);
        if (candidates.length === 1) {
          const c = candidates[0]!;
          assert.ok(r.ok && r.url === c.url);
          assert.equal(c.via, 'seed');
          assert.equal(c.source_url, null);
          assert.ok(await ctx.kv.scope.get(c.domain), `scope holds ${c.domain}`);
        } else {
          assert.ok(!r.ok, 'a seed is filtered only when it cannot be canonicalised');
          assert.equal(filtered[0]!.url, wire(seedUrl));
        }
      }),
      opts(400),
    );
  });

  test('seeds: plain-text bytes on crawl.seeds either decode to a seed or throw a SchemaError', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          anyLink.map((s) => new TextEncoder().encode(s)),
          fc.uint8Array({ maxLength: 300 }),
          fc.constantFrom('{', '{}', '{"url":""}', '{"url":1}', '{"url":"x","depth":-1}', '{"url":"x","depth":1.5}', '  ', '\u0000', '{"url":"https://example.com/","extra":1}').map((s) => new TextEncoder().encode(s)),
        ),
        async (bytes) => {
          let input: NormalizeInput;
          try {
            input = decodeNormalizeInput('crawl.seeds', bytes);
          } catch (err) {
            assert.ok(err instanceof SchemaError, `only a SchemaError, got ${String(err)}`);
            return;
          }
          const ctx = createFakeContext();
          // several lines are several seeds (plain text, so at depth 0): one outcome each
          const seeds = input.kind === 'seed' ? [input.seed] : input.kind === 'seeds' ? input.seeds : assert.fail('decoded as links');
          const { candidates, filtered } = checkEmitted(ctx, await run(ctx, input), input.kind === 'seed' ? (input.seed.depth ?? 0) : 0);
          assert.equal(candidates.length + filtered.length, seeds.length);
        },
      ),
      opts(300),
    );
  });
});
