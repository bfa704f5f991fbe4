/**
 * URL-normalisation conformance against third-party suites vendored in test/fixtures/conformance (SOURCES.md: pinned sources, licenses)
 * (see SOURCES.md there):
 *
 * - url-normalization-cases.json, crawler-commons BasicURLNormalizer profile: every case
 *   must pass, except the ones listed in DEPARTURES (each with the reason).
 * - same file, scrapy/w3lib canonicalize_url profile: a different profile (keeps userinfo,
 *   sorts by name *and* value, writes spaces as `+`, keeps `b=`); only counted and reported.
 * - urltestdata.json (WHATWG URL tests): canonicalize never throws, rejects every
 *   `failure: true` case, and for http(s) successes gives the same canonical URL for the
 *   input and for the expected href (and is idempotent).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { canonicalize, type CanonicalizeOptions } from '../../stages/normalize/canonical-url.js';

const CONFORMANCE_DIR = resolve(process.cwd(), 'test/fixtures/conformance');
const CASES_FILE = resolve(CONFORMANCE_DIR, 'url-normalization-cases.json');
const WHATWG_FILE = resolve(CONFORMANCE_DIR, 'urltestdata.json');

interface NormalizationCase {
  input: string;
  expected: string | null;
  source: string;
  profile: string;
  options: Record<string, unknown>;
  notes: string;
}

/**
 * crawler-commons cases the crawler deliberately does not follow, keyed by input.
 * Every entry must still be present in the suite and must still differ, so a stale
 * entry fails the test.
 */
const DEPARTURES: ReadonlyMap<string, string> = new Map([
  // Only http and https are crawled; crawler-commons also normalises other schemes.
  ['file:///foo/bar.txt', 'only http(s) URLs are crawled: file: is rejected (unsupported_scheme)'],
  ['file:/path/index.html', 'only http(s) URLs are crawled: file: is rejected (unsupported_scheme)'],
  ['file:/var/www/html/////./bar/index.html', 'only http(s) URLs are crawled: file: is rejected (unsupported_scheme)'],
  ['file:/var/www/html/foo/../bar/index.html', 'only http(s) URLs are crawled: file: is rejected (unsupported_scheme)'],
  ['ftp://foo.com/index.html', 'only http(s) URLs are crawled: ftp: is rejected (unsupported_scheme)'],
  ['ftp:/', 'only http(s) URLs are crawled: ftp: without a host is rejected'],
  // crawler-commons turns these into the host-less "http:/"; a URL with no host cannot be fetched.
  ['http:////', 'an http URL with an empty host is rejected (WHATWG URL parse failure) instead of becoming "http:/"'],
  ['http:///////', 'an http URL with an empty host is rejected (WHATWG URL parse failure) instead of becoming "http:/"'],
  // WHATWG URL serialises IPv6 addresses (including IPv4-mapped ones) in hex; we keep the
  // WHATWG form so that canonical hosts equal what URL/fetch report.
  ['http://[::ffff:127.0.0.1]/', 'IPv4-mapped IPv6 host is serialised the WHATWG way: [::ffff:7f00:1]'],
  // Non-default crawler-commons option the crawler does not offer: hosts are always punycode.
  ['http://xn--schne-lua.xn--bcher-kva.de/', 'option idnNormalization=UNICODE not supported: hosts are always ASCII (punycode)'],
  ['https://xn--90ax2c.xn--p1ai/', 'option idnNormalization=UNICODE not supported: hosts are always ASCII (punycode)'],
  ['http://schöne.xn--bcher-kva.de/', 'option idnNormalization=NONE not supported: hosts are always ASCII (punycode)'],
]);

function loadJson(file: string): unknown {
  if (!existsSync(file)) {
    assert.fail(
      `conformance data not found: ${file} (tests must run from the repository root; the data is vendored in test/fixtures/conformance)`,
    );
  }
  return JSON.parse(readFileSync(file, 'utf8'));
}

function loadCases(): NormalizationCase[] {
  const data = loadJson(CASES_FILE);
  assert.ok(Array.isArray(data), `${CASES_FILE}: expected a JSON array`);
  return data as NormalizationCase[];
}

const isCrawlerCommons = (c: NormalizationCase): boolean => c.profile.startsWith('crawler-commons');
const isW3lib = (c: NormalizationCase): boolean => c.profile.startsWith('scrapy w3lib');

/** Maps a crawler-commons option set onto canonicalize options; null = option not supported. */
function mapOptions(options: Record<string, unknown>): CanonicalizeOptions | null {
  const out: CanonicalizeOptions = {};
  for (const [key, value] of Object.entries(options)) {
    if (key === 'queryParamsToRemove' && Array.isArray(value)) out.stripParams = value as string[];
    else return null;
  }
  return out;
}

function run(input: string, options?: CanonicalizeOptions): string | null {
  const r = canonicalize(input, undefined, options);
  return r.ok ? r.url : null;
}

test('crawler-commons BasicURLNormalizer profile: every case passes or is a listed departure', () => {
  const cases = loadCases().filter(isCrawlerCommons);
  assert.ok(cases.length > 100, `expected the crawler-commons cases, found ${cases.length}`);
  const failures: string[] = [];
  const departuresSeen = new Set<string>();
  let passed = 0;
  for (const c of cases) {
    const departure = DEPARTURES.get(c.input);
    const options = mapOptions(c.options);
    const got = options === null ? run(c.input) : run(c.input, options);
    if (departure !== undefined) {
      departuresSeen.add(c.input);
      if (got === c.expected) failures.push(`stale departure (case now passes, remove it): ${JSON.stringify(c.input)}`);
      continue;
    }
    if (options === null) {
      failures.push(`unsupported options ${JSON.stringify(c.options)} for ${JSON.stringify(c.input)} and no departure listed`);
      continue;
    }
    if (got === c.expected) passed++;
    else {
      failures.push(
        `${JSON.stringify(c.input)}: got ${JSON.stringify(got)}, expected ${JSON.stringify(c.expected)} (${c.notes})`,
      );
    }
  }
  for (const input of DEPARTURES.keys()) {
    if (!departuresSeen.has(input)) failures.push(`departure not in the suite: ${JSON.stringify(input)}`);
  }
  const summary = `crawler-commons profile: ${passed}/${cases.length} pass, ${departuresSeen.size} listed departures`;
  console.log(summary);
  assert.deepEqual(failures, [], summary);
  assert.equal(passed + departuresSeen.size, cases.length);
});

test('scrapy/w3lib canonicalize_url profile: reported only (a different profile)', (t) => {
  const cases = loadCases().filter(isW3lib);
  assert.ok(cases.length > 0, 'expected w3lib cases');
  let passed = 0;
  let defaultCases = 0;
  let defaultPassed = 0;
  for (const c of cases) {
    const ok = run(c.input) === c.expected;
    if (ok) passed++;
    if (Object.keys(c.options).length === 0) {
      defaultCases++;
      if (ok) defaultPassed++;
    }
  }
  const summary =
    `w3lib profile: ${passed}/${cases.length} pass ` +
    `(${defaultPassed}/${defaultCases} of the cases with default options)`;
  console.log(summary);
  t.diagnostic(summary);
});

interface WhatwgCase {
  input: string;
  base: string | null;
  href?: string;
  failure?: boolean;
}

function loadWhatwg(): WhatwgCase[] {
  const data = loadJson(WHATWG_FILE);
  assert.ok(Array.isArray(data), `${WHATWG_FILE}: expected a JSON array`);
  // Strings in the file are comments.
  return (data as unknown[]).filter((x): x is WhatwgCase => typeof x === 'object' && x !== null);
}

function isValidBase(base: string | null): boolean {
  if (base === null) return true;
  try {
    new URL(base);
    return true;
  } catch {
    return false;
  }
}

test('WHATWG urltestdata: never throws, rejects every failure case', () => {
  const cases = loadWhatwg();
  assert.ok(cases.length > 800, `expected the WHATWG cases, found ${cases.length}`);
  const accepted: string[] = [];
  let failureCases = 0;
  for (const c of cases) {
    const r = canonicalize(c.input, c.base ?? undefined); // a throw fails the test
    assert.equal(typeof r.ok, 'boolean');
    if (c.failure === true && isValidBase(c.base)) {
      failureCases++;
      if (r.ok) accepted.push(`${JSON.stringify(c.input)} (base ${JSON.stringify(c.base)}) -> ${r.url}`);
    }
  }
  assert.ok(failureCases > 200, `expected the failure cases, found ${failureCases}`);
  assert.deepEqual(accepted, [], 'failure cases that canonicalize accepted');
});

test('WHATWG urltestdata: non-http(s) results are rejected; http(s) results agree with href and are idempotent', () => {
  const problems: string[] = [];
  let httpCases = 0;
  let rejected = 0;
  for (const c of loadWhatwg()) {
    if (c.failure === true || c.href === undefined) continue;
    const r = canonicalize(c.input, c.base ?? undefined);
    if (!/^https?:/.test(c.href)) {
      if (r.ok) problems.push(`non-http(s) ${JSON.stringify(c.input)} accepted as ${r.url}`);
      continue;
    }
    httpCases++;
    if (!r.ok) {
      // Our host rules are stricter than WHATWG (e.g. `http://!"$&'()*+,-.;=_\`{}~/`, `http://../`).
      if (r.reason !== 'invalid_host' && r.reason !== 'invalid_url') {
        problems.push(`${JSON.stringify(c.input)} rejected as ${r.reason}`);
      }
      rejected++;
      continue;
    }
    const fromHref = canonicalize(c.href);
    if (!fromHref.ok || fromHref.url !== r.url) {
      problems.push(`${JSON.stringify(c.input)}: ${r.url} but href ${c.href} gives ${JSON.stringify(fromHref)}`);
    }
    const again = canonicalize(r.url);
    if (!again.ok || again.url !== r.url) problems.push(`not idempotent: ${r.url} -> ${JSON.stringify(again)}`);
  }
  console.log(`WHATWG http(s) success cases: ${httpCases - rejected}/${httpCases} accepted, ${rejected} rejected`);
  assert.ok(httpCases > 200);
  assert.deepEqual(problems, []);
});
