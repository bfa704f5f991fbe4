import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeBody, encodingFromMetaContent, getEncoding, prescanForEncoding, sniffCharset, type CharsetSource } from '../../stages/extract/decode-body.js';
import { mulberry32 } from '../../testweb/prng.js';

/** bytes from a mix of strings (each char one byte, latin1) and byte values */
function bytes(...parts: Array<string | number[] | Uint8Array>): Uint8Array {
  const chunks = parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p)));
  return new Uint8Array(Buffer.concat(chunks));
}
const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const utf16le = (s: string) => new Uint8Array(Buffer.from(s, 'utf16le'));
const utf16be = (s: string) => new Uint8Array(Buffer.from(s, 'utf16le').swap16());

// Known encodings of a few words, written out so the expectations do not come from a decoder.
const SJIS_NIHONGO = [0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]; // 日本語
const EUCKR_HANGUGEO = [0xc7, 0xd1, 0xb1, 0xb9, 0xbe, 0xee]; // 한국어
const GBK_ZHONGWEN = [0xd6, 0xd0, 0xce, 0xc4]; // 中文
const BIG5_ZHONGWEN = [0xa4, 0xa4, 0xa4, 0xe5]; // 中文
const EUCJP_NIHON = [0xc6, 0xfc, 0xcb, 0xdc]; // 日本
const CP1251_PRIVET = [0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]; // Привет
const KOI8R_PRIVET = [0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4]; // Привет

interface Case {
  name: string;
  body: Uint8Array;
  header?: string | null;
  charset: string;
  source: CharsetSource;
  /** the whole text, or (with `contains`) a part of it */
  text: string;
  contains?: boolean;
  truncated?: boolean;
}

const cases: Case[] = [
  // --- byte order marks win over everything
  { name: 'UTF-8 BOM, stripped', body: bytes([0xef, 0xbb, 0xbf], utf8('<p>café</p>')), charset: 'utf-8', source: 'bom', text: '<p>café</p>' },
  { name: 'UTF-8 BOM beats the header', body: bytes([0xef, 0xbb, 0xbf], utf8('é')), header: 'windows-1252', charset: 'utf-8', source: 'bom', text: 'é' },
  {
    name: 'UTF-8 BOM beats a meta',
    body: bytes([0xef, 0xbb, 0xbf], utf8('<meta charset="shift_jis">é')),
    charset: 'utf-8',
    source: 'bom',
    text: '<meta charset="shift_jis">é',
  },
  { name: 'UTF-16LE BOM', body: bytes([0xff, 0xfe], utf16le('<p>€ 日本</p>')), header: 'utf-8', charset: 'utf-16le', source: 'bom', text: '<p>€ 日本</p>' },
  { name: 'UTF-16BE BOM', body: bytes([0xfe, 0xff], utf16be('<p>€ 日本</p>')), header: 'iso-8859-1', charset: 'utf-16be', source: 'bom', text: '<p>€ 日本</p>' },

  // --- the Content-Type charset
  { name: 'header shift_jis', body: bytes('<p>', SJIS_NIHONGO, '</p>'), header: 'shift_jis', charset: 'shift_jis', source: 'header', text: '<p>日本語</p>' },
  { name: 'header euc-kr', body: bytes('<p>', EUCKR_HANGUGEO, '</p>'), header: 'euc-kr', charset: 'euc-kr', source: 'header', text: '<p>한국어</p>' },
  { name: 'header gbk', body: bytes('<p>', GBK_ZHONGWEN, '</p>'), header: 'gbk', charset: 'gbk', source: 'header', text: '<p>中文</p>' },
  { name: 'header big5', body: bytes(BIG5_ZHONGWEN), header: 'big5', charset: 'big5', source: 'header', text: '中文' },
  { name: 'header euc-jp', body: bytes(EUCJP_NIHON), header: 'euc-jp', charset: 'euc-jp', source: 'header', text: '日本' },
  { name: 'header windows-1251', body: bytes(CP1251_PRIVET), header: 'windows-1251', charset: 'windows-1251', source: 'header', text: 'Привет' },
  { name: 'header koi8-r', body: bytes(KOI8R_PRIVET), header: 'koi8-r', charset: 'koi8-r', source: 'header', text: 'Привет' },
  {
    name: 'header beats a meta',
    body: bytes('<meta charset="utf-8">', CP1251_PRIVET),
    header: 'windows-1251',
    charset: 'windows-1251',
    source: 'header',
    text: '<meta charset="utf-8">Привет',
  },
  { name: 'header utf-16 (no BOM) is believed: utf-16le', body: utf16le('hi'), header: 'utf-16', charset: 'utf-16le', source: 'header', text: 'hi' },
  { name: 'header utf-16be (no BOM)', body: utf16be('hi'), header: 'utf-16be', charset: 'utf-16be', source: 'header', text: 'hi' },
  {
    name: 'unknown header label is ignored: the meta applies',
    body: bytes('<meta charset="shift_jis">', SJIS_NIHONGO),
    header: 'x-no-such-charset',
    charset: 'shift_jis',
    source: 'meta',
    text: '<meta charset="shift_jis">日本語',
  },
  { name: 'unknown header label, no meta: default rules', body: utf8('café'), header: 'bogus', charset: 'utf-8', source: 'valid-utf-8', text: 'café' },
  { name: 'empty header label is no label', body: utf8('café'), header: '', charset: 'utf-8', source: 'valid-utf-8', text: 'café' },

  // --- label aliases (WHATWG Encoding), through the header
  ...['latin1', 'iso-8859-1', 'ISO-8859-1', 'ascii', 'us-ascii', 'l1', 'cp1252', ' windows-1252 '].map(
    (label): Case => ({
      name: `label ${JSON.stringify(label)} → windows-1252`,
      body: bytes([0x93], 'caf', [0xe9, 0x94, 0x80]),
      header: label,
      charset: 'windows-1252',
      source: 'header',
      text: '\u201ccafé\u201d€',
    }),
  ),
  ...['x-sjis', 'ms_kanji', 'windows-31j', 'csshiftjis'].map(
    (label): Case => ({ name: `label ${label} → shift_jis`, body: bytes(SJIS_NIHONGO), header: label, charset: 'shift_jis', source: 'header', text: '日本語' }),
  ),
  ...['ks_c_5601-1987', 'korean', 'windows-949'].map(
    (label): Case => ({ name: `label ${label} → euc-kr`, body: bytes(EUCKR_HANGUGEO), header: label, charset: 'euc-kr', source: 'header', text: '한국어' }),
  ),
  ...['gb2312', 'x-gbk', 'chinese'].map(
    (label): Case => ({ name: `label ${label} → gbk`, body: bytes(GBK_ZHONGWEN), header: label, charset: 'gbk', source: 'header', text: '中文' }),
  ),
  { name: 'label utf8 → utf-8', body: utf8('é'), header: 'utf8', charset: 'utf-8', source: 'header', text: 'é' },
  {
    name: 'a replacement-encoding label (iso-2022-kr) decodes to one U+FFFD',
    body: bytes('<p>anything</p>'),
    header: 'iso-2022-kr',
    charset: 'replacement',
    source: 'header',
    text: '\ufffd',
  },

  // --- the <meta> prescan
  { name: 'meta charset', body: bytes('<meta charset="euc-kr"><p>', EUCKR_HANGUGEO), charset: 'euc-kr', source: 'meta', text: '<meta charset="euc-kr"><p>한국어' },
  { name: 'meta charset unquoted, upper case', body: bytes('<META CHARSET=Shift_JIS>', SJIS_NIHONGO), charset: 'shift_jis', source: 'meta', text: '<META CHARSET=Shift_JIS>日本語' },
  { name: 'meta charset single-quoted, self-closing', body: bytes("<meta charset='gbk'/>", GBK_ZHONGWEN), charset: 'gbk', source: 'meta', text: "<meta charset='gbk'/>中文" },
  { name: 'meta charset alias x-sjis', body: bytes('<meta charset="x-sjis">', SJIS_NIHONGO), charset: 'shift_jis', source: 'meta', text: '<meta charset="x-sjis">日本語' },
  {
    name: 'meta http-equiv Content-Type',
    body: bytes('<head><meta http-equiv="Content-Type" content="text/html; charset=gbk"></head>', GBK_ZHONGWEN),
    charset: 'gbk',
    source: 'meta',
    text: '<head><meta http-equiv="Content-Type" content="text/html; charset=gbk"></head>中文',
  },
  {
    name: 'meta content before http-equiv, quoted charset in content',
    body: bytes('<meta content=\'text/html; charset="windows-1251"\' http-equiv=content-type>', CP1251_PRIVET),
    charset: 'windows-1251',
    source: 'meta',
    text: '<meta content=\'text/html; charset="windows-1251"\' http-equiv=content-type>Привет',
  },
  {
    name: 'meta content without http-equiv is not a declaration',
    body: bytes('<meta name="x" content="text/html; charset=windows-1251">', CP1251_PRIVET),
    charset: 'windows-1252',
    source: 'default',
    text: '<meta name="x" content="text/html; charset=windows-1251">Ïðèâåò',
  },
  {
    name: 'meta charset="utf-16" means UTF-8',
    body: utf8('<meta charset="utf-16"><p>café</p>'),
    charset: 'utf-8',
    source: 'meta',
    text: '<meta charset="utf-16"><p>café</p>',
  },
  {
    name: 'meta http-equiv charset=utf-16be means UTF-8',
    body: bytes('<meta http-equiv="content-type" content="text/html;charset=UTF-16BE">', [0xc3]), // invalid UTF-8 on purpose
    charset: 'utf-8',
    source: 'meta',
    text: '<meta http-equiv="content-type" content="text/html;charset=UTF-16BE">\ufffd',
  },
  {
    name: 'meta x-user-defined means windows-1252',
    body: bytes('<meta charset="x-user-defined">', [0x93, 0x94]),
    charset: 'windows-1252',
    source: 'meta',
    text: '<meta charset="x-user-defined">\u201c\u201d',
  },
  {
    name: 'an unknown meta label is skipped: a later meta applies',
    body: bytes('<meta charset="no-such"><meta charset="koi8-r">', KOI8R_PRIVET),
    charset: 'koi8-r',
    source: 'meta',
    text: '<meta charset="no-such"><meta charset="koi8-r">Привет',
  },
  {
    name: 'an unknown meta label alone: default rules',
    body: bytes('<meta charset="no-such">', [0x93, 0x94]),
    charset: 'windows-1252',
    source: 'default',
    text: '<meta charset="no-such">\u201c\u201d',
  },
  {
    name: 'the first of two metas wins',
    body: bytes('<meta charset="windows-1251"><meta charset="koi8-r">', CP1251_PRIVET),
    charset: 'windows-1251',
    source: 'meta',
    text: '<meta charset="windows-1251"><meta charset="koi8-r">Привет',
  },
  {
    name: 'a meta in a comment does not count',
    body: bytes('<!-- <meta charset="koi8-r"> --><p>', [0x93, 0x94]),
    charset: 'windows-1252',
    source: 'default',
    text: '<!-- <meta charset="koi8-r"> --><p>\u201c\u201d',
  },
  {
    name: 'a meta inside another tag’s attribute does not count',
    body: bytes('<div title=\'<meta charset="koi8-r">\'>', [0x93, 0x94]),
    charset: 'windows-1252',
    source: 'default',
    text: '<div title=\'<meta charset="koi8-r">\'>\u201c\u201d',
  },
  {
    name: 'a meta after the first 1024 bytes does not count',
    body: bytes('<!-- ', 'x'.repeat(1100), ' --><meta charset="windows-1251">', CP1251_PRIVET),
    charset: 'windows-1252',
    source: 'default',
    text: 'Ïðèâåò',
    contains: true,
  },
  {
    name: 'a meta just inside the first 1024 bytes counts',
    body: bytes('<!--', 'x'.repeat(980), '--><meta charset="windows-1251">', CP1251_PRIVET),
    charset: 'windows-1251',
    source: 'meta',
    text: 'Привет',
    contains: true,
  },
  {
    name: 'XML declaration',
    body: bytes('<?xml version="1.0" encoding="windows-1251"?><html>', CP1251_PRIVET),
    charset: 'windows-1251',
    source: 'xml',
    text: '<?xml version="1.0" encoding="windows-1251"?><html>Привет',
  },
  {
    name: 'a meta beats the XML declaration',
    body: bytes('<?xml version="1.0" encoding="windows-1251"?><meta charset="koi8-r">', KOI8R_PRIVET),
    charset: 'koi8-r',
    source: 'meta',
    text: 'Привет',
    contains: true,
  },
  { name: 'UTF-16LE "<?x" without BOM', body: utf16le('<?xml version="1.0"?><a/>'), charset: 'utf-16le', source: 'xml', text: '<?xml version="1.0"?><a/>' },
  { name: 'UTF-16BE "<?x" without BOM', body: utf16be('<?xml version="1.0"?><a/>'), charset: 'utf-16be', source: 'xml', text: '<?xml version="1.0"?><a/>' },

  // --- nothing declared
  { name: 'valid UTF-8 → utf-8', body: utf8('<p>naïve café — 日本</p>'), charset: 'utf-8', source: 'valid-utf-8', text: '<p>naïve café — 日本</p>' },
  { name: 'pure ASCII → utf-8', body: utf8('<p>plain</p>'), charset: 'utf-8', source: 'valid-utf-8', text: '<p>plain</p>' },
  { name: 'empty body', body: new Uint8Array(0), charset: 'utf-8', source: 'valid-utf-8', text: '' },
  {
    name: 'not UTF-8 → windows-1252, with its specials 0x80–0x9F',
    body: bytes('<p>', [0x93], 'quoted', [0x94, 0x20, 0x80, 0x20, 0x85, 0x20, 0x99, 0x20, 0x81], '</p>'),
    charset: 'windows-1252',
    source: 'default',
    text: '<p>\u201cquoted\u201d € … ™ \u0081</p>',
  },
  {
    name: 'UTF-8 cut inside the last character (body truncated) is still UTF-8',
    body: utf8('<p>café 日本').subarray(0, -1),
    charset: 'utf-8',
    source: 'valid-utf-8',
    text: '<p>café 日\ufffd',
  },
  {
    name: 'ASCII plus a cut lead byte, said to be truncated → utf-8',
    body: bytes('<p>abc', [0xe6, 0x97]),
    truncated: true,
    charset: 'utf-8',
    source: 'valid-utf-8',
    text: '<p>abc\ufffd',
  },
  {
    name: 'ASCII plus a lone high byte at the end, not truncated → windows-1252',
    body: bytes('<p>caf', [0xe9]),
    charset: 'windows-1252',
    source: 'default',
    text: '<p>café',
  },

  // --- invalid bytes become U+FFFD
  { name: 'invalid UTF-8 under a utf-8 header', body: bytes('a', [0xff], 'b', [0xc3]), header: 'utf-8', charset: 'utf-8', source: 'header', text: 'a\ufffdb\ufffd' },
  { name: 'invalid Shift_JIS', body: bytes([0x82, 0xa0, 0xa0, 0xfd, 0x82]), header: 'shift_jis', charset: 'shift_jis', source: 'header', text: 'あ\ufffd\ufffd\ufffd' },
  { name: 'invalid EUC-KR', body: bytes([0xb0, 0xa1, 0xff, 0xb0]), header: 'euc-kr', charset: 'euc-kr', source: 'header', text: '가\ufffd\ufffd' },
  { name: 'odd-length UTF-16LE', body: bytes([0xff, 0xfe, 0x41, 0x00, 0x42]), charset: 'utf-16le', source: 'bom', text: 'A\ufffd' },
];

describe('decodeBody', () => {
  for (const c of cases) {
    it(c.name, () => {
      const r = decodeBody(c.body, c.header ?? null, { truncated: c.truncated ?? false });
      assert.equal(r.charset, c.charset, 'charset');
      assert.equal(r.source, c.source, 'source');
      if (c.contains) assert.ok(r.text.includes(c.text), `${JSON.stringify(c.text)} in ${JSON.stringify(r.text.slice(-80))}`);
      else assert.equal(r.text, c.text);
      assert.deepEqual(sniffCharset(c.body, c.header ?? null, { truncated: c.truncated ?? false }), { charset: c.charset, source: c.source });
    });
  }

  it('keeps the old two-argument call working', () => {
    const r = decodeBody(bytes([0x93, 0x94]), null);
    assert.equal(r.text, '\u201c\u201d');
    assert.equal(r.charset, 'windows-1252');
  });

  it('decodes a subarray view, not its whole buffer', () => {
    const whole = bytes('xx<meta charset="koi8-r">', KOI8R_PRIVET, 'yy');
    const view = whole.subarray(2, whole.length - 2);
    assert.deepEqual(decodeBody(view, null), { text: '<meta charset="koi8-r">Привет', charset: 'koi8-r', source: 'meta' });
  });

  it('never throws on random bytes with any label, and names a real encoding', () => {
    const rnd = mulberry32(1234);
    const labels = [null, 'utf-8', 'shift_jis', 'euc-kr', 'gbk', 'gb18030', 'big5', 'iso-2022-jp', 'utf-16be', 'x-user-defined', 'iso-8859-16', 'hz-gb-2312', 'bogus', ''];
    for (let i = 0; i < 300; i++) {
      const body = new Uint8Array(Math.floor(rnd() * 600));
      for (let j = 0; j < body.length; j++) body[j] = Math.floor(rnd() * 256);
      if (i % 3 === 0) body.set(Buffer.from('<meta charset="euc-jp">', 'latin1').subarray(0, Math.min(23, body.length)));
      const label = labels[i % labels.length]!;
      const r = decodeBody(body, label);
      assert.equal(typeof r.text, 'string');
      assert.ok(r.charset === 'replacement' || getEncoding(r.charset) === r.charset, r.charset);
    }
  });
});

describe('getEncoding (WHATWG labels)', () => {
  const table: Array<[string, string | null]> = [
    ['utf-8', 'utf-8'],
    ['UTF8', 'utf-8'],
    ['unicode-1-1-utf-8', 'utf-8'],
    ['latin1', 'windows-1252'],
    ['iso-8859-1', 'windows-1252'],
    ['ascii', 'windows-1252'],
    ['x-sjis', 'shift_jis'],
    ['utf-16', 'utf-16le'],
    ['unicode', 'utf-16le'],
    ['gb2312', 'gbk'],
    ['big5-hkscs', 'big5'],
    ['iso-8859-16', 'iso-8859-16'],
    ['tis-620', 'windows-874'],
    ['iso-2022-kr', 'replacement'],
    ['  \tKOI8-R\n', 'koi8-r'],
    ['utf-32', null],
    ['x-unknown', null],
    ['', null],
    ['utf-8\u00a0', null],
  ];
  for (const [label, name] of table) {
    it(`${JSON.stringify(label)} → ${name}`, () => assert.equal(getEncoding(label), name));
  }
});

describe('encodingFromMetaContent', () => {
  const table: Array<[string, string | null]> = [
    ['text/html; charset=utf-8', 'utf-8'],
    ['text/html;charset=Shift_JIS', 'shift_jis'],
    ['text/html; CHARSET = "gbk"', 'gbk'],
    ["text/html; charset='euc-kr'", 'euc-kr'],
    ['text/html; charset=koi8-r; foo=bar', 'koi8-r'],
    ['text/html; charsetx=1; charset=koi8-r', 'koi8-r'],
    ['text/html; charset="unterminated', null],
    ['text/html; charset=', null],
    ['text/html; charset=nonsense', null],
    ['text/html', null],
  ];
  for (const [content, name] of table) {
    it(`${JSON.stringify(content)} → ${name}`, () => assert.equal(encodingFromMetaContent(content), name));
  }
});

describe('prescanForEncoding', () => {
  const table: Array<[string, string | null]> = [
    ['<meta charset=utf-8>', 'utf-8'],
    ['<meta/charset=koi8-r>', 'koi8-r'],
    ['<meta\tcharset\t=\t"koi8-r">', 'koi8-r'],
    ['<metacharset=koi8-r>', null], // not a meta tag
    ['<meta charset="koi8-r"', null], // runs out of bytes inside the tag
    ['<meta charset=koi8-r charset=utf-8>', 'koi8-r'], // a repeated attribute is ignored
    ['<meta http-equiv=content-type http-equiv=x content="charset=koi8-r">', 'koi8-r'],
    ['<meta http-equiv=refresh content="charset=koi8-r">', null],
    ['<meta content="charset=koi8-r" charset="windows-1251" http-equiv=content-type>', 'windows-1251'], // charset attribute overrides
    ['<!--><meta charset=koi8-r>', 'koi8-r'], // "<!-->" is a whole comment
    ['<!---><meta charset=koi8-r>', 'koi8-r'], // so is "<!--->"
    ['<!-- -><meta charset=koi8-r>', null], // still inside the comment
    ['</p title="<meta charset=koi8-r>"><meta charset=gbk>', 'gbk'],
    ['<?php echo "<meta charset=koi8-r>" ?>', null],
    ['<!DOCTYPE html><html><head><meta charset="windows-1251">', 'windows-1251'],
    ['<?xml version="1.0" encoding="utf-16"?>', 'utf-8'], // UTF-16 in an ASCII declaration means UTF-8
    ['<?xml version="1.0" encoding = \'koi8-r\' ?>', 'koi8-r'],
    ['<?xml version="1.0"?>', null],
    ['', null],
  ];
  for (const [html, name] of table) {
    it(`${JSON.stringify(html)} → ${name}`, () => assert.equal(prescanForEncoding(bytes(html))?.charset ?? null, name));
  }
});
