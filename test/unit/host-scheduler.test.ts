import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { HostScheduler } from '../../stages/politeness-gate/host-scheduler.js';
import type { NextTurn, ServedTurn } from '../../stages/politeness-gate/serve-host.js';
import { createFakeContext, T0 } from '../support/fake-context.js';

const HOST = 'www.example.com';

/**
 * A scheduler whose turns are `answer`'s (no KV, no streams): counts the turns each host got.
 * `answer` may hold a turn open until the test lets it end.
 */
function schedulerWith(answer: (turn: number) => NextTurn | Promise<NextTurn>) {
  const ctx = createFakeContext();
  const turns: string[] = [];
  const serve = async (_ctx: unknown, host: string): Promise<ServedTurn> => {
    turns.push(host);
    return { next: await answer(turns.length), level: null };
  };
  const scheduler = new HostScheduler(ctx, 4, serve);
  scheduler.start();
  return { scheduler, turns };
}

/** A scheduler whose host's first turn stays open until `endFirstTurn`; later turns end idle. It has begun that turn. */
async function schedulerInFirstTurn() {
  let endFirstTurn: (t: NextTurn) => void = () => undefined;
  const s = schedulerWith((n) => (n === 1 ? new Promise<NextTurn>((resolve) => (endFirstTurn = resolve)) : { kind: 'idle' }));
  s.scheduler.notify(HOST);
  await settle();
  assert.equal(s.turns.length, 1);
  return { ...s, endFirstTurn: (t: NextTurn) => endFirstTurn(t) };
}

/** long enough for the scheduler's loop to run what is due (it is woken at once; real time) */
const settle = () => sleep(30);

describe('host scheduler: a URL queued for a host', () => {
  test('gives an idle host a turn', async () => {
    const { scheduler, turns } = schedulerWith(() => ({ kind: 'idle' }));
    try {
      scheduler.notify(HOST);
      await settle();
      assert.equal(turns.length, 1);
      scheduler.queued(HOST);
      await settle();
      assert.equal(turns.length, 2, 'the idle host was served again');
    } finally {
      await scheduler.stop();
    }
  });

  test('gives no turn now to a host whose turn is to come (a request in flight, its delay): that turn serves the URL', async () => {
    const { scheduler, turns } = schedulerWith(() => ({ kind: 'wait', until: T0 + 60_000 }));
    try {
      scheduler.notify(HOST);
      await settle();
      assert.equal(turns.length, 1);
      scheduler.queued(HOST);
      scheduler.queued(HOST);
      await settle();
      assert.equal(turns.length, 1, 'no turn before the host may be served');
      // a change of the host's slot (a release) still brings it forward, as before
      scheduler.notify(HOST);
      await settle();
      assert.equal(turns.length, 2);
    } finally {
      await scheduler.stop();
    }
  });

  test('gives a turn now to a host whose wait only some lanes had (a paused job): the URL may be in another', async () => {
    const { scheduler, turns } = schedulerWith(() => ({ kind: 'wait', until: T0 + 60_000, lanesOnly: true }));
    try {
      scheduler.notify(HOST);
      await settle();
      assert.equal(turns.length, 1);
      scheduler.queued(HOST);
      await settle();
      assert.equal(turns.length, 2);
    } finally {
      await scheduler.stop();
    }
  });

  test('during a turn that ends idle, gives the host another (the turn may have read its queue before the URL)', async () => {
    const { scheduler, turns, endFirstTurn } = await schedulerInFirstTurn();
    try {
      scheduler.queued(HOST);
      endFirstTurn({ kind: 'idle' });
      await settle();
      assert.equal(turns.length, 2);
    } finally {
      await scheduler.stop();
    }
  });

  test('during a turn that granted a request, gives no other: the release brings the host back', async () => {
    const { scheduler, turns, endFirstTurn } = await schedulerInFirstTurn();
    try {
      scheduler.queued(HOST);
      endFirstTurn({ kind: 'granted' });
      await settle();
      assert.equal(turns.length, 1);
    } finally {
      await scheduler.stop();
    }
  });
});
