import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as turn } from 'node:timers/promises';
import { startProgress } from '../../cli/progress.js';
import { StageMetrics } from '../../pipeline/metrics.js';
import type { StreamAdmin } from '../../ports/stream-admin.js';
import type { WaitSummary } from '../../stages/politeness-gate/index.js';

/** A server whose consumers are all empty: it counts how often it was asked. */
function emptyServer() {
  const asked = { backlog: 0 };
  const admin = {
    consumerLag: async () => {
      asked.backlog += 1;
      return [];
    },
  } as unknown as StreamAdmin;
  return { admin, asked };
}

/** A log stream (not a terminal) that keeps the lines written to it. */
function logStream() {
  const lines: string[] = [];
  const stream = { isTTY: false, write: (s: string) => lines.push(s) } as unknown as NodeJS.WriteStream;
  return { stream, lines };
}

const oneHostWaiting = (): WaitSummary => ({ hosts: 1, queued: 5, byReason: { 'crawl delay': 1 }, nextTryAt: Date.now() + 30_000 });

/** Moves the clock on a second at a time; `everySecond` runs before each. */
async function advance(t: { mock: { timers: { tick(ms: number): void } } }, ms: number, everySecond?: () => void) {
  for (let at = 0; at < ms; at += 1000) {
    everySecond?.();
    t.mock.timers.tick(1000);
    for (let i = 0; i < 20; i++) await turn(); // the tick's reads are promises
  }
}

describe('the progress line', () => {
  it('is written every 10 s while pages are fetched, and ever less often, up to a minute, while the crawl mostly waits', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    const { admin, asked } = emptyServer();
    const { stream, lines } = logStream();
    const metrics = new StageMetrics();
    let waitScans = 0;
    const progress = startProgress(admin, metrics, stream, async () => {
      waitScans += 1;
      return oneHostWaiting();
    });
    try {
      // moving: 20 pages fetched before every read
      for (let i = 0; i < 3; i++) {
        metrics.count('fetch', 'responses', '2xx', 20);
        await advance(t, 10_000);
      }
      assert.equal(lines.length, 3, 'one line per 10 s while it fetches');
      assert.match(lines[2]!, /^progress: 30s .*fetched 60/);

      // waiting: nothing fetched, nothing queued; reads at +20, +40, +60, +60 s ...
      const before = lines.length;
      const asksBefore = asked.backlog;
      await advance(t, 300_000);
      const idleLines = lines.length - before;
      assert.ok(idleLines >= 5 && idleLines <= 8, `5 to 8 lines in 5 min of waiting, not 30 (got ${idleLines})`);
      assert.ok(asked.backlog - asksBefore < 30 * 5, 'the backlog is read less often too');
      assert.ok(waitScans <= 3 + idleLines, 'one host scan a line at most');
      assert.match(lines.at(-1)!, /waiting: 1 host/);

      // fetching again: seen at the next read (a minute at most), then a line every 10 s
      const fetchTwo = () => metrics.count('fetch', 'responses', '2xx', 2);
      await advance(t, 60_000, fetchTwo);
      const after = lines.length;
      await advance(t, 30_000, fetchTwo);
      assert.equal(lines.length - after, 3, 'moving again: a line every 10 s');
    } finally {
      progress.stop();
    }
  });

  it('backs off while a polite crawl trickles: a page every 10 s with nothing queued in the stages is waiting, not moving', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    const { admin, asked } = emptyServer();
    const { stream, lines } = logStream();
    const metrics = new StageMetrics();
    const progress = startProgress(admin, metrics, stream, async () => oneHostWaiting());
    try {
      let second = 0;
      await advance(t, 300_000, () => {
        if (++second % 10 === 0) metrics.count('fetch', 'responses', '2xx', 1);
      });
      assert.ok(lines.length >= 5 && lines.length <= 8, `5 to 8 lines in 5 min, not 30 (got ${lines.length})`);
      assert.ok(asked.backlog < 30 * 5, 'the backlog is read less often too');
      // each line still counts every page fetched up to its read
      const [, at, fetched] = /^progress: (\d+)s .*fetched (\d+) /.exec(lines.at(-1)!) ?? [];
      assert.ok(Math.abs(Number(fetched) - Number(at) / 10) <= 1, lines.at(-1));
    } finally {
      progress.stop();
    }
  });
});
