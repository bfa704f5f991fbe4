/**
 * Which addresses a connection tries, in which order, and how they race: the SSRF guard on
 * each DNS answer, families interleaved, addresses that failed lately last, the charged
 * address first; happy eyeballs with a fake clock-free set of attempts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AddressHealth } from '../../pipeline/adapters/address-health.js';
import { allowList } from '../../pipeline/adapters/address-policy.js';
import { ConnectTargets, interleaveFamilies, preferAddress } from '../../pipeline/adapters/connect-targets.js';
import type { DnsCache } from '../../pipeline/adapters/dns-cache.js';
import { parseResolveRule, ruleTargets } from '../../pipeline/adapters/resolve-map.js';
import { AllAttemptsFailedError, raceConnect } from '../../pipeline/adapters/http/connect-race.js';
import { hostAddressResolver } from '../../pipeline/adapters/host-address.js';

const fakeDns = (answers: Record<string, string[]>) => ({ lookup: async (host: string) => answers[host] ?? [] }) as unknown as DnsCache;

describe('--resolve with several addresses', () => {
  test('each address with its own port, tried in the order given', () => {
    const rule = parseResolveRule('fallback.net.test=127.0.0.3:8080,[::1]:8081,127.0.0.1');
    assert.deepEqual(ruleTargets(rule), [{ address: '127.0.0.3', port: 8080 }, { address: '::1', port: 8081 }, { address: '127.0.0.1' }]);
    assert.deepEqual(parseResolveRule('one.test=127.0.0.1:80'), { pattern: 'one.test', address: '127.0.0.1', port: 80 }, 'one address: as before');
    assert.throws(() => parseResolveRule('a.test=127.0.0.1,'), /invalid --resolve "a.test=127.0.0.1,": an empty address/);
    assert.throws(() => parseResolveRule('a.test=127.0.0.1,nothere'), /"nothere" is not an IPv4 or IPv6 address/);
  });
});

describe('connect targets', () => {
  const guard = { allowed: allowList([]) };

  test('DNS answers: private ones left out, families interleaved, the failed last; all private is a refusal naming the host', async () => {
    const health = new AddressHealth();
    const dns = fakeDns({
      'mixed.test': ['192.0.2.10', '10.0.0.5', '198.51.100.20', '2001:db8::1', '2001:db8::2'],
      'private.test': ['10.0.0.5', '127.0.0.1'],
    });
    // documentation ranges are refused too: allow them as stand-ins for public addresses
    const t = new ConnectTargets([], dns, { allowed: allowList(['192.0.2.0/24', '198.51.100.0/24', '2001:db8::/32']) }, health);
    const order = async () => (await t.of('mixed.test', 443)).map((x) => x.address);
    assert.deepEqual(await order(), ['192.0.2.10', '2001:db8::1', '198.51.100.20', '2001:db8::2']);
    health.connectFailed('192.0.2.10');
    assert.deepEqual(await order(), ['2001:db8::1', '198.51.100.20', '2001:db8::2', '192.0.2.10']);
    health.connected('192.0.2.10');
    assert.deepEqual((await order())[0], '192.0.2.10');
    await assert.rejects(new ConnectTargets([], dns, guard, health).of('private.test', 80), {
      name: 'RefusedAddressError',
      message: 'private.test resolves to 10.0.0.5: refused to connect to 10.0.0.5: private address (allow it with --allow-network) (and 1 more address, all refused)',
    });
    await assert.rejects(new ConnectTargets([], dns, guard, health).of('[::1]', 80), /refused to connect to ::1: loopback/);
  });

  test("a rule's addresses are never refused; its ports replace the URL's default port only", async () => {
    const t = new ConnectTargets([parseResolveRule('*.site.test=127.0.0.3:8080,127.0.0.1:8080')], fakeDns({}), guard, new AddressHealth());
    assert.deepEqual(await t.of('h1.site.test', 80), [
      { address: '127.0.0.3', port: 8080, viaRule: true },
      { address: '127.0.0.1', port: 8080, viaRule: true },
    ]);
    assert.equal((await t.of('h1.site.test', 9000))[0]!.port, 9000);
  });

  test('the charged address goes first; the gate charges the first address the client would try', async () => {
    const health = new AddressHealth();
    const rules = [parseResolveRule('two.test=127.0.0.3:80,127.0.0.1:80')];
    const t = new ConnectTargets(rules, fakeDns({}), guard, health);
    assert.deepEqual(preferAddress(await t.of('two.test', 80), '127.0.0.1').map((x) => x.address), ['127.0.0.1', '127.0.0.3']);
    assert.deepEqual(preferAddress(await t.of('two.test', 80), '198.51.100.1').map((x) => x.address), ['127.0.0.3', '127.0.0.1'], 'an address the host no longer has changes nothing');
    const charge = hostAddressResolver(rules, fakeDns({}), [], health);
    assert.equal(await charge('two.test'), '127.0.0.3');
    health.connectFailed('127.0.0.3');
    assert.equal(await charge('two.test'), '127.0.0.1', 'after the first failed to connect');
    assert.equal(await hostAddressResolver([], fakeDns({ 'p.test': ['10.0.0.1'] }), [], health)('p.test'), null, 'a refused host is charged to no address');
  });

  test('a failed address is tried first again once forgotten', () => {
    let now = 0;
    const health = new AddressHealth({ forgetAfterMs: 1000, now: () => now });
    health.connectFailed('a');
    assert.equal(health.failedLately('a'), true);
    now = 1001;
    assert.equal(health.failedLately('a'), false);
  });

  test('interleaving keeps the first address first', () => {
    assert.deepEqual(interleaveFamilies(['::1', '::2', '::3', '1.1.1.1']), ['::1', '1.1.1.1', '::2', '::3']);
    assert.deepEqual(interleaveFamilies(['1.1.1.1', '::1']), ['1.1.1.1', '::1']);
  });
});

describe('happy eyeballs', () => {
  interface FakeSocket {
    name: number;
    destroyed: boolean;
    destroy(): void;
  }
  const socket = (name: number): FakeSocket => ({ name, destroyed: false, destroy() { this.destroyed = true; } });
  type Plan = { after: number; ok: boolean } | 'silent';

  /** attempt i follows plan[i]: connects or fails after `after` ms, or never answers */
  function run(plans: Plan[], delay = 30, signal = new AbortController().signal) {
    const started: number[] = [];
    const aborted: number[] = [];
    const t0 = Date.now();
    const failed: number[] = [];
    const race = raceConnect<FakeSocket>(
      plans.length,
      (i, s) =>
        new Promise<FakeSocket>((resolve, reject) => {
          started[i] = Date.now() - t0;
          s.addEventListener('abort', () => {
            aborted.push(i);
            reject(s.reason);
          });
          const p = plans[i]!;
          if (p === 'silent') return;
          setTimeout(() => (p.ok ? resolve(socket(i)) : reject(Object.assign(new Error(`attempt ${i} refused`), { code: 'ECONNREFUSED' }))), p.after);
        }),
      (i) => `addr${i}`,
      { attemptDelayMs: delay, signal, onFailed: (i) => failed.push(i) },
    );
    return { race, started, aborted, failed };
  }

  // the attempt delay on a clock the test moves (setImmediate, not mocked, lets the promises settle)
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  test('a silent first address costs one attempt delay, and is abandoned once the second connects', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const r = run(['silent', { after: 5, ok: true }], 40);
    await settle();
    t.mock.timers.tick(39);
    await settle();
    assert.equal(r.started.length, 1, 'the second waits for the attempt delay');
    t.mock.timers.tick(1);
    await settle();
    assert.equal(r.started.length, 2, 'and starts when it ends');
    t.mock.timers.tick(5);
    const won = await r.race;
    assert.equal(won.index, 1);
    assert.deepEqual(r.aborted, [0]);
  });

  test('a refused first address: the next starts at once', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const r = run([{ after: 1, ok: false }, { after: 1, ok: true }], 1000);
    await settle();
    t.mock.timers.tick(1);
    await settle();
    assert.deepEqual(r.failed, [0]);
    assert.equal(r.started.length, 2, 'the second started when the first was refused, not after the 1000 ms delay');
    t.mock.timers.tick(1);
    const won = await r.race;
    assert.equal(won.index, 1);
  });

  test('a slow first address is not abandoned: it wins if it connects first', async () => {
    const r = run([{ after: 60, ok: true }, { after: 200, ok: true }], 20);
    const won = await r.race;
    assert.equal(won.index, 0);
    assert.deepEqual(r.aborted, [1]);
  });

  test('all fail: one error listing each address, classified by the first', async () => {
    const r = run([{ after: 1, ok: false }, { after: 1, ok: false }], 10);
    await assert.rejects(r.race, (err: unknown) => {
      assert.ok(err instanceof AllAttemptsFailedError);
      assert.equal(err.code, 'ECONNREFUSED');
      assert.equal(err.message, 'none of 2 addresses connected (addr0: attempt 0 refused; addr1: attempt 1 refused)');
      return true;
    });
  });

  test('the deadline aborts every attempt', async () => {
    const ac = new AbortController();
    const r = run(['silent', 'silent'], 10, ac.signal);
    setTimeout(() => ac.abort(new Error('connect timeout after 50 ms')), 50);
    await assert.rejects(r.race, /connect timeout after 50 ms/);
    assert.deepEqual(r.aborted.sort(), [0, 1]);
  });

  test('no address at all is an error, not a wait', async () => {
    await assert.rejects(raceConnect(0, () => assert.fail('no attempt'), String, { attemptDelayMs: 1, signal: new AbortController().signal }), /no address to connect to/);
  });

  test('a fatal failure (the proxy is down) ends the race without trying the others', async () => {
    const started: number[] = [];
    const race = raceConnect<FakeSocket>(
      3,
      (i) => {
        started.push(i);
        return Promise.reject(Object.assign(new Error('proxy down'), { fatal: true }));
      },
      (i) => `addr${i}`,
      { attemptDelayMs: 1, signal: new AbortController().signal, isFatal: (e) => (e as { fatal?: boolean }).fatal === true },
    );
    await assert.rejects(race, /proxy down/);
    assert.deepEqual(started, [0]);
  });
});
