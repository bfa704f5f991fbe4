import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// tests run from dist/test/unit: the sources are three folders up
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const README_MAX_BYTES = 12 * 1024;

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  const headings = [...text.matchAll(/^#{1,6} (.*)$/gm)].map((m) => anchorOf(m[1]!));
  // an explicit anchor (`<a id="dns"></a>`) names a place inside a section, as GitHub renders it
  const explicit = [...text.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!);
  return new Set([...headings, ...explicit]);
}

const docs = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

test('every relative link of the README and docs/ leads to a file and heading that exist', () => {
  const broken: string[] = [];
  for (const doc of docs) {
    const text = readFileSync(path.join(ROOT, doc), 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const link = m[1]!;
      if (/^[a-z]+:/i.test(link)) continue; // https:, mailto:
      const [file, anchor] = link.split('#') as [string, string | undefined];
      const target = file === '' ? path.join(ROOT, doc) : path.resolve(path.dirname(path.join(ROOT, doc)), file);
      if (!existsSync(target)) broken.push(`${doc}: ${link} (no such file)`);
      else if (anchor && target.endsWith('.md') && !anchors(target).has(anchor)) broken.push(`${doc}: ${link} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});

test(`the README stays a short front door (at most ${README_MAX_BYTES} bytes)`, () => {
  const size = readFileSync(path.join(ROOT, 'README.md')).length;
  assert.ok(size <= README_MAX_BYTES, `README.md is ${size} bytes`);
});

/** Source folders whose comments point into docs/ (the code says why, the docs say how much). */
const SOURCE_DIRS = ['app', 'cli', 'ops', 'pipeline', 'ports', 'schemas', 'stages', 'bench', 'scripts', 'testweb', 'test'];

function tsFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return tsFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

test('every docs/ file and section the code names exists', () => {
  const broken: string[] = [];
  for (const file of SOURCE_DIRS.flatMap((d) => tsFiles(path.join(ROOT, d)))) {
    for (const m of readFileSync(file, 'utf8').matchAll(/docs\/([\w.-]+\.md)(?:#([\w-]+))?/g)) {
      const target = path.join(ROOT, 'docs', m[1]!);
      if (!existsSync(target)) broken.push(`${path.relative(ROOT, file)}: ${m[0]} (no such file)`);
      else if (m[2] && !anchors(target).has(m[2])) broken.push(`${path.relative(ROOT, file)}: ${m[0]} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});

// docs/performance.md says where performance stands today; how it got there is in git history
const PERFORMANCE_MAX_BYTES = 20 * 1024;

test(`docs/performance.md stays a page of today's figures (at most ${PERFORMANCE_MAX_BYTES} bytes)`, () => {
  const size = readFileSync(path.join(ROOT, 'docs/performance.md')).length;
  assert.ok(size <= PERFORMANCE_MAX_BYTES, `docs/performance.md is ${size} bytes`);
});
