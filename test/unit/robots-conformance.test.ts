/**
 * Conformance of stages/shared/robots/robots-rules.ts with Google's robots.txt parser
 * tests (google/robotstxt robots_test.cc, 145 isAllowed checks), vendored in
 * test/fixtures/conformance (see SOURCES.md there: pinned sources and licenses).
 *
 * Every case passes except the ones in DEPARTURES, each listed with its reason. The test
 * checks that each departure really gives the other answer, so the list cannot go stale.
 *
 * The ID_Encoding raw non-ASCII question (SOURCES.md): our contract is that verdict(url)
 * gets a canonical URL and parses it with WHATWG URL, so a raw 'ツ' in the path is matched as
 * '%E3%83%84', as RFC 9309 section 2.2.2 asks. The two cases that give the raw character
 * and expect Google's "no match" answer are departures on purpose.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { compileRobots, type RobotsRecord } from '../../stages/shared/robots/robots-rules.js';

interface RobotsCase {
  robots_txt: string;
  user_agent: string;
  url: string;
  expected_allowed: boolean;
  test_name: string;
  source_line: number;
  google_specific: boolean;
  rfc9309_section: string | null;
  notes: string | null;
}

const CASES_PATH = path.resolve(process.cwd(), 'test/fixtures/conformance/google-robotstxt-cases.json');
const EXPECTED_CASE_COUNT = 145;

const key = (c: Pick<RobotsCase, 'test_name' | 'source_line'>) => `${c.test_name}@${c.source_line}`;

/** Cases whose expectation we deliberately do not follow: `test_name@source_line` -> reason. */
const DEPARTURES: Record<string, string> = {
  // API contract (not Google-specific in the data; SOURCES.md leaves the choice to us)
  'ID_Encoding#3@419':
    'raw non-ASCII URL path: verdict() parses the URL with WHATWG URL, so /foo/bar/ツ is matched as ' +
    '/foo/bar/%E3%83%84 and the Allow applies (RFC 9309 2.2.2 percent-encodes before comparing); ' +
    'Google expects the caller to encode and finds no match',
  'ID_Encoding#5@430':
    'raw non-ASCII URL path: same as ID_Encoding#3; the Allow is written %E3%83%84 and the URL, once ' +
    'WHATWG-parsed, is /foo/bar/%E3%83%84, so it matches',
  // Google-specific
  'GoogleOnly_SystemTest#1@42':
    "empty URL: verdict() takes an absolute http(s) URL and answers anything else with allowed=false " +
    "(fail closed) rather than guessing a path; Google maps '' to '/'",
  'GoogleOnly_SystemTest#2@45': "empty URL: not an absolute http(s) URL, so allowed=false (fail closed); Google maps '' to '/'",
  'GoogleOnly_SystemTest#4@52': "empty URL: not an absolute http(s) URL, so allowed=false (fail closed); Google maps '' to '/'",
  'GoogleOnly_IndexHTMLisDirectory#1@505':
    "'Allow: /dir/index.html' is not widened to also allow '/dir/': RFC 9309 has no such rule and a " +
    'polite crawler should not fetch more than the site literally allowed',
};

/** Only these non-Google-specific cases may be departures (the API-contract choice above). */
const CONTRACT_DEPARTURES = new Set(['ID_Encoding#3@419', 'ID_Encoding#5@430']);

function loadCases(): RobotsCase[] {
  if (!fs.existsSync(CASES_PATH)) {
    throw new Error(
      `robots.txt conformance data not found at ${CASES_PATH}. Run the tests from the repository root ` +
        `(cwd ${process.cwd()}); the data is vendored in test/fixtures/conformance.`,
    );
  }
  const data: unknown = JSON.parse(fs.readFileSync(CASES_PATH, 'utf8'));
  if (!Array.isArray(data)) throw new Error(`${CASES_PATH}: expected a JSON array of cases`);
  return data as RobotsCase[];
}

let cases: RobotsCase[] = [];
let loadError: unknown = null;
try {
  cases = loadCases();
} catch (err) {
  loadError = err;
}

function verdictFor(c: RobotsCase): boolean {
  const record: RobotsRecord = { kind: 'rules', body: c.robots_txt, fetchedAt: 0, status: 200, reason: 'http 200: rules' };
  return compileRobots(record, c.user_agent).verdict(c.url).allowed;
}

test('conformance data is present and complete', () => {
  if (loadError) throw loadError;
  assert.equal(cases.length, EXPECTED_CASE_COUNT, `expected ${EXPECTED_CASE_COUNT} cases in ${CASES_PATH}`);
  const keys = new Set(cases.map(key));
  assert.equal(keys.size, cases.length, 'test_name@source_line must identify a case');
  for (const c of cases) {
    assert.equal(typeof c.robots_txt, 'string');
    assert.equal(typeof c.user_agent, 'string');
    assert.equal(typeof c.url, 'string');
    assert.equal(typeof c.expected_allowed, 'boolean');
    assert.equal(typeof c.google_specific, 'boolean');
  }
});

test('DEPARTURES names only existing cases; only the API-contract ones are not Google-specific', () => {
  if (loadError) throw loadError;
  const byKey = new Map(cases.map((c) => [key(c), c]));
  for (const k of Object.keys(DEPARTURES)) {
    const c = byKey.get(k);
    assert.ok(c, `departure ${k} names no case`);
    if (!c.google_specific) assert.ok(CONTRACT_DEPARTURES.has(k), `${k} is not Google-specific: it must pass`);
  }
});

for (const google of [false, true]) {
  describe(google ? 'Google-specific cases' : 'RFC 9309 cases (google_specific=false)', () => {
    for (const c of cases.filter((x) => x.google_specific === google)) {
      const departure = DEPARTURES[key(c)];
      const title = `${key(c)}: ${c.user_agent || "''"} ${JSON.stringify(c.url).slice(0, 80)} -> ${c.expected_allowed}`;
      test(departure ? `${title} [departure]` : title, () => {
        const got = verdictFor(c);
        if (departure) {
          assert.notEqual(got, c.expected_allowed, `listed as a departure but now agrees with Google; remove it: ${departure}`);
        } else {
          assert.equal(got, c.expected_allowed, `${c.test_name} (line ${c.source_line})${c.notes ? `: ${c.notes}` : ''}`);
        }
      });
    }
  });
}

test('pass counts', (t) => {
  if (loadError) throw loadError;
  for (const google of [false, true]) {
    const group = cases.filter((c) => c.google_specific === google);
    const passed = group.filter((c) => verdictFor(c) === c.expected_allowed).length;
    const departures = group.filter((c) => DEPARTURES[key(c)] !== undefined).length;
    assert.equal(passed + departures, group.length);
    t.diagnostic(`${google ? 'google_specific' : 'non-google-specific'}: ${passed}/${group.length} pass, ${departures} departures`);
  }
});
