import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalize } from '../../stages/normalize/canonical-url.js';
import { isSessionParam, stripSessionPathParams } from '../../stages/normalize/session-ids.js';

const HEX32 = '0123456789abcdef0123456789ABCDEF';

describe('crawl traps: session ids are removed by canonicalisation', () => {
  const cases: Array<[name: string, input: string, expected: string]> = [
    ['servlet path parameter', 'http://shop.test/item.jsp;jsessionid=A1B2C3D4?id=7', 'http://shop.test/item.jsp?id=7'],
    ['servlet path parameter, upper case', 'http://shop.test/;JSESSIONID=xyz', 'http://shop.test/'],
    ['path parameter in a middle segment', 'http://shop.test/a;jsessionid=1/b', 'http://shop.test/a/b'],
    ['other path parameters stay', 'http://shop.test/a;v=2/b;jsessionid=9', 'http://shop.test/a;v=2/b'],
    ['jsessionid query parameter', 'http://shop.test/?jsessionid=abc&page=2', 'http://shop.test/?page=2'],
    ['PHPSESSID, any case', 'http://shop.test/list?PHPSESSID=q1w2e3&cat=4', 'http://shop.test/list?cat=4'],
    ['classic ASP, random suffix', 'http://shop.test/?ASPSESSIONIDQASCTRDB=KLMNOP&x=1', 'http://shop.test/?x=1'],
    ['ColdFusion pair', 'http://shop.test/?CFID=123&CFTOKEN=456&p=1', 'http://shop.test/?p=1'],
    ['generic spellings', 'http://shop.test/?sessionid=1&session_id=2&sessid=3&q', 'http://shop.test/?q'],
    ['osCommerce and Zen Cart', 'http://shop.test/?osCsid=ab12&zenid=cd34', 'http://shop.test/'],
    ['percent-encoded name', 'http://shop.test/?%50HPSESSID=1&a', 'http://shop.test/?a'],
    ['phpBB sid (32 hex)', `http://forum.test/viewtopic.php?t=5&sid=${HEX32}`, 'http://forum.test/viewtopic.php?t=5'],
    ['sid that is not a token stays', 'http://news.test/story?sid=42', 'http://news.test/story?sid=42'],
    ['vBulletin s (32 hex)', `http://forum.test/showthread.php?s=${HEX32}&t=9`, 'http://forum.test/showthread.php?t=9'],
    ['s as a search query stays', 'http://shop.test/search?s=red+shoes', 'http://shop.test/search?s=red+shoes'],
    ['s with 33 hex digits stays', `http://shop.test/?s=${HEX32}f`, `http://shop.test/?s=${HEX32}f`],
    ['a name that only starts like one stays', 'http://shop.test/?sessionidx=1', 'http://shop.test/?sessionidx=1'],
  ];
  for (const [name, input, expected] of cases) {
    test(name, () => {
      const r = canonicalize(input);
      assert.ok(r.ok, `${input} is accepted`);
      assert.equal(r.url, expected);
    });
  }

  test('two sessions of one page are one URL', () => {
    const a = canonicalize('http://shop.test/p.jsp;jsessionid=AAA?PHPSESSID=1&id=3');
    const b = canonicalize('http://shop.test/p.jsp;jsessionid=BBB?id=3&PHPSESSID=2');
    assert.ok(a.ok && b.ok);
    assert.equal(a.url, b.url);
  });

  test('the predicates', () => {
    assert.equal(isSessionParam('jsessionid', ''), true);
    assert.equal(isSessionParam('aspsessionidabcd', 'x'), true);
    assert.equal(isSessionParam('sid', HEX32), true);
    assert.equal(isSessionParam('sid', 'abc'), false);
    assert.equal(isSessionParam('page', HEX32), false);
    assert.equal(stripSessionPathParams('/a/b'), '/a/b');
    assert.equal(stripSessionPathParams('/a;jsessionid=1;v=2'), '/a;v=2');
  });
});
