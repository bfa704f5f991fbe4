import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deflateSync } from 'node:zlib';
import { harvestPdfLinks } from '../../stages/fetch/pdf-links.js';
import { AFTER_THE_BOMB, hostilePdfShapes, linkAnnot, pdf, pdfPart as buf, randomBytes, type Part } from '../../bench/support/pdf-samples.js';

/** An object whose body is a stream, compressed with FlateDecode or not. */
function stream(content: Part, opts: { flate?: boolean; eol?: string } = {}): Part[] {
  const data = opts.flate ? deflateSync(buf(content)) : buf(content);
  const filter = opts.flate ? ' /Filter /FlateDecode' : '';
  return [`<< /Length ${data.length}${filter} >>\nstream${opts.eol ?? '\n'}`, data, '\nendstream'];
}

const hex = (s: string) => Buffer.from(s, 'latin1').toString('hex');


describe('harvestPdfLinks', () => {
  const cases: Array<{ name: string; pdf: Uint8Array; links: string[] }> = [
    { name: 'link annotation, literal string', pdf: pdf(linkAnnot('(https://example.com/a)')), links: ['https://example.com/a'] },
    {
      name: 'literal-string escapes: \\( \\) \\\\ octal and line continuation',
      pdf: pdf(
        linkAnnot('(https://example.com/wiki/Foo_\\(bar\\))'),
        linkAnnot('(http://example.com/back\\\\slash)'), // a backslash, which the URL parser reads as '/'
        linkAnnot('(http://example.com\\057octal)'),
        linkAnnot('(http://example.com/long\\\n/line)'),
        linkAnnot('(http://example.com/(nested))'),
      ),
      links: [
        'https://example.com/wiki/Foo_(bar)',
        'http://example.com/back/slash',
        'http://example.com/octal',
        'http://example.com/long/line',
        'http://example.com/(nested)',
      ],
    },
    {
      name: 'hex strings, with white space, odd length and a UTF-16BE one',
      pdf: pdf(
        linkAnnot(`<${hex('https://example.org/hex')}>`),
        linkAnnot(`< ${hex('https://example.org/spaced').replace(/(..)/g, '$1 ').toUpperCase()}>`),
        linkAnnot(`<${hex('http://example.org/odd0')}>`.replace('30>', '3>')),
        linkAnnot(`<FEFF${Buffer.from('https://example.org/utf16', 'utf16le').swap16().toString('hex')}>`),
      ),
      links: ['https://example.org/hex', 'https://example.org/spaced', 'http://example.org/odd0', 'https://example.org/utf16'],
    },
    {
      name: 'text of an uncompressed content stream, trailing punctuation stripped',
      pdf: pdf(stream('BT /F1 12 Tf 72 712 Td (See http://example.net/docs. Or \\(https://example.net/alt\\), ok) Tj ET')),
      links: ['http://example.net/docs', 'https://example.net/alt'],
    },
    {
      name: 'trailing punctuation of all kinds',
      pdf: pdf(stream('http://a.example/one, http://a.example/two; <http://a.example/three> "http://a.example/four"! http://a.example/five...')),
      links: ['http://a.example/one', 'http://a.example/two', 'http://a.example/three', 'http://a.example/four', 'http://a.example/five'],
    },
    {
      name: 'FlateDecode content stream',
      pdf: pdf(stream('BT (Download: https://flate.example/file.zip) Tj ET', { flate: true })),
      links: ['https://flate.example/file.zip'],
    },
    {
      name: 'FlateDecode object stream holding the link annotations (PDF 1.5)',
      pdf: pdf(stream('5 0 6 60 << /Type /Annot /Subtype /Link /A << /S /URI /URI (https://objstm.example/x\\(1\\)) >> >> << /URI <' + hex('https://objstm.example/hex') + '> >>', { flate: true })),
      links: ['https://objstm.example/x(1)', 'https://objstm.example/hex'],
    },
    {
      name: 'stream keyword followed by CRLF',
      pdf: pdf(stream('(https://crlf.example/)', { flate: true, eol: '\r\n' })),
      links: ['https://crlf.example/'],
    },
    {
      name: 'order of first appearance across plain text and streams, deduplicated',
      pdf: pdf(
        linkAnnot('(https://one.example/)'),
        stream('(https://two.example/) (https://one.example/)', { flate: true }),
        stream('(https://three.example/) (https://two.example/)'),
        linkAnnot('(https://four.example/)'),
      ),
      links: ['https://one.example/', 'https://two.example/', 'https://three.example/', 'https://four.example/'],
    },
    {
      name: 'URLs are serialized by the URL parser (scheme and host case, default port)',
      pdf: pdf(linkAnnot('(HTTPS://Example.COM:443/Path)'), stream('HTTP://WWW.EXAMPLE.COM')),
      links: ['https://example.com/Path', 'http://www.example.com/'],
    },
    {
      name: 'only absolute http(s) URLs',
      pdf: pdf(
        linkAnnot('(mailto:someone@example.com)'),
        linkAnnot('(/relative/path)'),
        linkAnnot('(ftp://files.example/x)'),
        linkAnnot('(javascript:alert\\(1\\))'),
        linkAnnot('(http://)'),
        stream('file:///etc/passwd https:// nothing http://.'),
      ),
      links: [],
    },
    {
      name: '"stream" inside a word is not a stream keyword',
      pdf: pdf(['<< /Title (the upstream\nproject) >>'], stream('(https://after-upstream.example/)', { flate: true })),
      links: ['https://after-upstream.example/'],
    },
    {
      name: 'a dictionary after /URI is not a hex string',
      pdf: pdf(['<< /URI << /Base (https://base.example/) >> >>']),
      links: ['https://base.example/'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(harvestPdfLinks(c.pdf), c.links));
  }

  it('stops at maxLinks', () => {
    const text = Array.from({ length: 50 }, (_, i) => `(https://many.example/${i})`).join(' ');
    const file = pdf(stream(text, { flate: true }));
    assert.equal(harvestPdfLinks(file).length, 50);
    assert.deepEqual(harvestPdfLinks(file, 10), Array.from({ length: 10 }, (_, i) => `https://many.example/${i}`));
    assert.deepEqual(harvestPdfLinks(file, 0), []);
  });

  it('skips a stream that inflates past the per-stream cap, keeps the others', () => {
    const big = 'x'.repeat(200_000) + ' https://inside-big.example/ ';
    const file = pdf(stream(big, { flate: true }), stream('(https://small.example/)', { flate: true }));
    assert.deepEqual(harvestPdfLinks(file, 1000, { maxStreamOutputBytes: 10_000 }), ['https://small.example/']);
    assert.deepEqual(harvestPdfLinks(file), ['https://inside-big.example/', 'https://small.example/']);
  });

  it('stops inflating when the total budget is spent', () => {
    const streams = Array.from({ length: 5 }, (_, i) => stream(`${'y'.repeat(3000)} (https://s${i}.example/)`, { flate: true }));
    const file = pdf(...streams);
    assert.equal(harvestPdfLinks(file).length, 5);
    assert.deepEqual(harvestPdfLinks(file, 1000, { maxTotalInflatedBytes: 7000 }), ['https://s0.example/', 'https://s1.example/']);
    assert.deepEqual(harvestPdfLinks(file, 1000, { maxStreams: 1 }), ['https://s0.example/']);
  });

  it('a few small broken streams do not use up the budget of the good ones', () => {
    const broken = ['<< /Filter /FlateDecode >>\nstream\n', Buffer.from([0x78, 0x9c, 0xff, 0xff]), '\nendstream'];
    const file = pdf(broken, broken, broken, broken, broken, stream('(https://good.example/)', { flate: true }));
    assert.deepEqual(harvestPdfLinks(file, 1000, { maxTotalInflatedBytes: 100_000 }), ['https://good.example/']);
  });

  it('a truncated file gives what it has, including a cut Flate stream', () => {
    const file = pdf(linkAnnot('(https://first.example/)'), stream(`(https://second.example/) ${Buffer.from(randomBytes(3000, 3)).toString('hex')} (https://lost.example/)`, { flate: true }));
    const cutAt = Buffer.from(file).indexOf('endstream') - 30;
    assert.deepEqual(harvestPdfLinks(file.subarray(0, cutAt)), ['https://first.example/', 'https://second.example/']);
  });

  it('never throws on garbage, truncations and hostile shapes', () => {
    const inputs: Uint8Array[] = [
      new Uint8Array(0),
      buf('%PDF-1.7'),
      buf('stream\n'),
      buf('stream\nendstream'),
      buf('stream\n\x78\x9c\x01\x02\x03endstream'), // a zlib header, then junk
      buf('/URI ('),
      buf('/URI <'),
      buf('/URI <zz>'),
      buf('/URI (\\'),
      buf('http://'),
      buf('https://a.example/\\'),
      randomBytes(100_000, 7),
    ];
    const valid = pdf(linkAnnot('(https://valid.example/)'), stream('(https://valid.example/two)', { flate: true }));
    for (let cut = 0; cut < valid.length; cut += 7) inputs.push(valid.subarray(0, cut));
    for (const input of inputs) {
      const links = harvestPdfLinks(input);
      assert.ok(Array.isArray(links));
      for (const l of links) assert.match(l, /^https?:\/\//);
    }
  });

  // what these inputs cost (each under 3 s) is measured by `npm run bench:inputs`
  it('a 20 MB random buffer has no links', () => {
    assert.deepEqual(harvestPdfLinks(randomBytes(20 * 1024 * 1024, 42)), []);
  });

  it('hostile input: unclosed strings, streams without end, and deflate bombs give a list of links (the link after a bomb too)', () => {
    let afterTheBomb = 0;
    for (const [name, input] of hostilePdfShapes()) {
      const value = harvestPdfLinks(input);
      assert.ok(Array.isArray(value), name);
      for (const l of value) assert.match(l, /^https?:\/\//, name);
      if (name === 'one big bomb') {
        assert.deepEqual(value, [AFTER_THE_BOMB]);
        afterTheBomb += 1;
      }
    }
    assert.equal(afterTheBomb, 1, 'the shape with a link after its bomb was among those checked');
  });
});
