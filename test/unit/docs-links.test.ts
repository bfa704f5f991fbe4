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
