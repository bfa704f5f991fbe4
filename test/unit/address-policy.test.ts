import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { allowList, embeddedIpv4, nonPublicReason, refusal } from '../../pipeline/adapters/address-policy.js';

describe('SSRF guard: address classes', () => {
  const cases: Array<[string, string | null]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', null],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT'],
    ['100.128.0.1', null],
    ['224.0.0.251', 'multicast'],
    ['0.0.0.0', 'unspecified ("this network")'],
    ['255.255.255.255', 'reserved'],
    ['8.8.8.8', null],
    ['93.184.216.34', null],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fd12:3456::1', 'unique-local'],
    ['fc00::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['2606:4700::1111', null],
    ['::ffff:127.0.0.1', 'loopback (in IPv6 form)'],
    ['::ffff:7f00:1', 'loopback (in IPv6 form)'],
    ['::ffff:169.254.169.254', 'link-local (in IPv6 form)'],
    ['::ffff:a9fe:a9fe', 'link-local (in IPv6 form)'],
    ['64:ff9b::10.0.0.1', 'private (in IPv6 form)'],
    ['::ffff:8.8.8.8', null],
    ['[::1]', 'loopback'],
  ];
  for (const [ip, why] of cases) {
    test(`${ip} → ${why ?? 'public'}`, () => assert.equal(nonPublicReason(ip), why));
  }

  test('embedded IPv4 in mapped and NAT64 forms', () => {
    assert.equal(embeddedIpv4('::ffff:10.0.0.1'), '10.0.0.1');
    assert.equal(embeddedIpv4('::FFFF:0a00:0001'), '10.0.0.1');
    assert.equal(embeddedIpv4('64:ff9b::c000:0201'), '192.0.2.1');
    assert.equal(embeddedIpv4('2001:db8::1'), null);
  });
});

describe('SSRF guard: decisions', () => {
  const none = allowList([]);
  test('a public address passes; a private one is refused with the reason and the way out', () => {
    assert.equal(refusal('8.8.8.8', none, false), null);
    assert.equal(refusal('10.0.0.5', none, false), 'refused to connect to 10.0.0.5: private address (allow it with --allow-network)');
  });
  test('a --resolve rule is the user’s choice: allowed', () => {
    assert.equal(refusal('127.0.0.1', none, true), null);
  });
  test('--allow-network lets a network through, and only that network; mapped forms too', () => {
    const allowed = allowList(['10.1.0.0/16', 'fd00::/8']);
    assert.equal(refusal('10.1.2.3', allowed, false), null);
    assert.equal(refusal('::ffff:10.1.2.3', allowed, false), null);
    assert.equal(refusal('fd00::5', allowed, false), null);
    assert.match(refusal('10.2.0.1', allowed, false) ?? '', /private/);
    assert.match(refusal('169.254.169.254', allowed, false) ?? '', /link-local/);
  });
  test('a bad CIDR is a clear error', () => {
    assert.throws(() => allowList(['10.0.0.0']), /invalid --allow-network "10.0.0.0": expected ADDRESS\/PREFIX/);
    assert.throws(() => allowList(['10.0.0.0/33']), /invalid --allow-network/);
    assert.throws(() => allowList(['nope/8']), /invalid --allow-network/);
  });
});
