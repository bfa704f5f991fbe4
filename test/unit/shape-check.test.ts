import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { z } from 'zod';
import { shapeCheckOf } from '../../schemas/shape-check.js';
import { decodeInternal, decodeMessage, encodeMessage, SchemaError } from '../../schemas/codec.js';
import { ArchivedExchange } from '../../schemas/exchange-messages.js';
import { ExtractedPage, FetchedPage } from '../../schemas/page-messages.js';
import { DiscoveredLinks, FetchGrant } from '../../schemas/url-messages.js';
import { UrlOutcome } from '../../schemas/outcome-messages.js';

const revisit = { interval_ms: 3600_000, digest: 'sha1:A', simhash: '0123456789abcdef', fetched_at: 1, due_at: 2, changed: true, etag: null };

/** One valid message per internal edge schema, with its optional and nested parts present. */
const samples: [string, z.ZodType, Record<string, unknown>][] = [
  [
    'fetch grant',
    FetchGrant,
    {
      v: 1, url: 'http://a.test/x', host: 'a.test', domain: 'a.test', depth: 2, source_url: null, via: 'link', redirect_chain: ['http://a.test/'],
      job: 'j1', revisit, fetch_id: 'f1', admitted_at: 5, attempt: 1, lease_id: 'l1', granted_at: 6, delay_ms: 0, ip: '127.0.0.1',
    },
  ],
  [
    'discovered links',
    DiscoveredLinks,
    { v: 1, source_url: 'http://a.test/', depth: 1, via: 'link', links: [{ url: 'http://a.test/b', anchor: 'b', rel: '' }, { url: 'http://a.test/c', revisit }] },
  ],
  [
    'fetched page',
    FetchedPage,
    {
      v: 1, fetch_id: 'f1', url: 'http://a.test/', host: 'a.test', domain: 'a.test', depth: 0, fetch_time: 1, fetch_status: 200, duration_ms: 3,
      content_type: 'text/html', charset: null, headers: { etag: '"x"' }, body: new Uint8Array([60, 112, 62]), truncated: false,
      validators: { etag: '"x"', last_modified: null },
    },
  ],
  [
    'extracted page',
    ExtractedPage,
    {
      v: 1, fetch_id: 'f1', url: 'http://a.test/', host: 'a.test', domain: 'a.test', depth: 0, fetch_time: 1, fetch_status: 200, duration_ms: 3,
      content_type: 'text/html', charset: 'utf-8', truncated: false, content_length: 10, content_digest: 'sha1:X', title: 't', text: 'a b',
      description: null, language: 'en', canonical_url: null, noindex: false, nofollow: false, text_full: 'a b',
      links: [{ url: 'http://a.test/b', anchor: 'b', rel: 'nofollow', source: 'a' }], headings: [{ level: 1, text: 'T' }],
      opengraph: { 'og:title': 'T' }, json_ld: [{ '@type': 'Article' }], text_source: 'main', published_at: null, simhash: 'ffff', text_words: 2,
    },
  ],
  [
    'url outcome',
    UrlOutcome,
    { v: 1, event_id: 'e1', fetch_id: null, url: 'http://a.test/', host: 'a.test', outcome: 'network_error', reason: 'refused', fetch_status: null, fetch_time: 1, duration_ms: null, depth: 0 },
  ],
  [
    'archived exchange',
    ArchivedExchange,
    {
      v: 1, fetch_id: 'f1', url: 'http://a.test/', host: 'a.test', domain: 'a.test', depth: 0, fetch_time: 1, fetch_status: 200, duration_ms: 3,
      content_type: 'text/html', charset: null, headers: {}, body: new Uint8Array(0), truncated: false,
      exchange: {
        kind: 'page', capture_id: 'f1:0', method: 'GET', request_headers: [['Host', 'a.test']], status_text: 'OK', remote_ip: null, failure: null,
        redirect: null, robots: null, refers_to_date: null, attempt: 0,
      },
    },
  ],
];

/** Values a field is set to: every JSON-ish kind, edge numbers, the literal and enum values the samples use. */
const replacement = fc.constantFrom<unknown>(
  undefined, null, 0, -1, 1.5, 7, Number.NaN, Number.POSITIVE_INFINITY, '', 'x', 'link', 'page', 1, true, [], [1], [{}], [['a', 'b']], {}, { url: 'u' }, new Uint8Array(1),
);

/** Every path into a sample (objects and arrays, one level of array elements). */
function pathsOf(v: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (v === null || typeof v !== 'object' || v instanceof Uint8Array) return [];
  const keys = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v);
  return keys.flatMap((k) => [[...prefix, k], ...pathsOf((v as Record<string | number, unknown>)[k], [...prefix, k])]);
}

function setPath(v: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(v) as Record<string | number, unknown>;
  let at = copy;
  for (const k of path.slice(0, -1)) at = at[k] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (value === undefined && !Array.isArray(at)) delete at[last];
  else at[last] = value;
  return copy;
}

describe('shape check of internal messages', () => {
  for (const [what, schema, sample] of samples) {
    test(`${what}: the sample is valid for zod and for the check`, () => {
      assert.equal(schema.safeParse(sample).success, true, JSON.stringify(schema.safeParse(sample).error?.issues));
      assert.equal(shapeCheckOf(schema)(sample), null);
    });

    test(`${what}: any one field changed, the check says what zod says`, () => {
      const paths = pathsOf(sample);
      fc.assert(
        fc.property(fc.constantFrom(...paths), replacement, (path, value) => {
          const changed = setPath(sample, path, value);
          const zodOk = schema.safeParse(changed).success;
          const bad = shapeCheckOf(schema)(changed);
          assert.equal(bad === null, zodOk, `${path.join('.')} = ${String(value)}: zod ${zodOk ? 'accepts' : 'refuses'}, check says ${bad ?? 'fits'}`);
        }),
        { numRuns: 400 },
      );
    });
  }

  test('a decoded message equals what zod made of it, and drops unknown top-level keys as zod does', () => {
    for (const [what, schema, sample] of samples) {
      const bytes = encodeMessage({ ...sample, added_later: 'x' });
      assert.deepEqual(decodeInternal(schema, bytes, what), decodeMessage(schema, bytes, what), what);
    }
  });

  test('a malformed message is a schema error naming the field and what it should be', () => {
    const grant = samples[0]![2];
    assert.throws(() => decodeInternal(FetchGrant, encodeMessage({ ...grant, url: 7 }), 'fetch grant'), (err: Error) => {
      assert.ok(err instanceof SchemaError);
      assert.equal(err.message, 'decoding fetch grant: url: expected string, got number');
      return true;
    });
    const links = samples[1]![2];
    assert.throws(
      () => decodeInternal(DiscoveredLinks, encodeMessage({ ...links, links: [{ url: 'u' }, { anchor: 'no url' }] }), 'discovered links'),
      /decoding discovered links: links\.1\.url: expected string, got nothing/,
    );
    assert.throws(() => decodeInternal(FetchGrant, encodeMessage('just a string'), 'fetch grant'), /decoding fetch grant: \(root\): expected object, got string/);
    assert.throws(() => decodeInternal(FetchGrant, encodeMessage(grant).subarray(0, 12), 'fetch grant'), /not valid msgpack/);
  });
});
