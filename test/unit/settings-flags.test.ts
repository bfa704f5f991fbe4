import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { addSettingsOptions, mergeSettings, type SettingsFlags } from '../../cli/settings-flags.js';
import { UsageError } from '../../cli/usage-error.js';
import { robotsTokenOf } from '../../stages/shared/robots/robots-rules.js';

/** The settings flags as `crawl run` parses them, then merged as it merges them. */
function settingsFrom(args: string[]) {
  const cmd = addSettingsOptions(new Command()).exitOverride();
  cmd.parse(args, { from: 'user' });
  return mergeSettings(null, cmd.opts<SettingsFlags>());
}

describe('settings flags: the robots token', () => {
  test('from a compatible; user agent, the product after "compatible;"', () => {
    const s = settingsFrom(['--user-agent', 'Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.org/bot)']);
    assert.equal(s.robotsToken, undefined, 'nothing stored: workers derive it from the same user agent');
    assert.equal(robotsTokenOf(s), 'examplebot');
  });

  test('--robots-token overrides it and is stored with the settings (crawl-config)', () => {
    const s = settingsFrom(['--user-agent', 'Mozilla/5.0 (compatible; ExampleBot/1.0)', '--robots-token', 'Other_Bot']);
    assert.equal(s.robotsToken, 'Other_Bot');
    assert.equal(robotsTokenOf(s), 'other_bot');
    // a later run's flags keep it (the stored settings are the base)
    assert.equal(robotsTokenOf(mergeSettings(s, { resolve: [], include: [], exclude: [] })), 'other_bot');
  });

  const bad: Array<[string, string[], RegExp]> = [
    ['a --robots-token with a version', ['--robots-token', 'Bot/1.0'], /^--robots-token must be a product token of letters, _ and - \(RFC 9309\), got "Bot\/1.0"$/],
    ['a --robots-token with a digit', ['--robots-token', 'bot2'], /^--robots-token must be a product token/],
    ['a user agent naming no token', ['--user-agent', '(compatible; 9bot)'], /^--user-agent "\(compatible; 9bot\)" names no product token .*: give --robots-token NAME$/],
  ];
  for (const [what, args, message] of bad) {
    test(`${what}: a usage error naming the option`, () => {
      assert.throws(() => settingsFrom(args), (err: unknown) => err instanceof UsageError && message.test(err.message));
    });
  }

  test('a user agent without a token is fine with --robots-token', () => {
    assert.equal(robotsTokenOf(settingsFrom(['--user-agent', '(compatible; 9bot)', '--robots-token', 'ninebot'])), 'ninebot');
  });
});

describe('settings flags: DNS at breadth', () => {
  test('defaults: 64 lookups in flight, 100,000 names, failures 5 s, negatives by SOA up to an hour', () => {
    const s = settingsFrom([]);
    assert.deepEqual([s.dnsMaxInFlight, s.dnsCacheEntries, s.dnsFailureTtlMs, s.dnsNegativeTtlMs, s.dnsNegativeMaxTtlMs], [64, 100_000, 5000, 30_000, 3_600_000]);
  });

  test('each flag sets its setting', () => {
    const s = settingsFrom(['--dns-max-in-flight', '8', '--dns-cache-entries', '5000', '--dns-failure-ttl-ms', '1000', '--dns-negative-ttl-ms', '2000', '--dns-negative-max-ttl-ms', '60000']);
    assert.deepEqual([s.dnsMaxInFlight, s.dnsCacheEntries, s.dnsFailureTtlMs, s.dnsNegativeTtlMs, s.dnsNegativeMaxTtlMs], [8, 5000, 1000, 2000, 60_000]);
  });

  for (const [args, flag] of [
    [['--dns-max-in-flight', '0'], '--dns-max-in-flight'],
    [['--dns-failure-ttl-ms', '600000'], '--dns-failure-ttl-ms'],
    [['--dns-cache-entries', '10'], '--dns-cache-entries'],
  ] as const) {
    test(`${args.join(' ')}: refused, naming the option`, () => {
      assert.throws(() => settingsFrom([...args]), (err: Error) => err.message.includes(flag));
    });
  }
});

describe('settings flags: importance', () => {
  const merged = (stored: ReturnType<typeof settingsFrom> | null, args: string[]) => {
    const cmd = addSettingsOptions(new Command()).exitOverride();
    cmd.parse(args, { from: 'user' });
    return mergeSettings(stored, cmd.opts<SettingsFlags>());
  };

  test('on by default; --no-importance turns it off, a resumed crawl keeps it off, --importance turns it back on', () => {
    assert.equal(settingsFrom([]).importance, true);
    const off = settingsFrom(['--no-importance']);
    assert.equal(off.importance, false);
    assert.equal(merged(off, []).importance, false);
    assert.equal(merged(off, ['--importance']).importance, true);
  });
});
