// Structured data and link sources from extractHtml: headings, OpenGraph, JSON-LD, hreflang,
// link rel alternate/next/prev, iframes, meta refresh, <base> and language.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { extractHtml } from '../../stages/extract/extract-html.js';
import { detectLanguage } from '../../stages/extract/detect-language.js';
import { iso6393OfTag } from '../../stages/shared/language-codes.js';
import { MAX_JSON_LD_DEPTH, refreshTarget } from '../../stages/extract/structured-data.js';

const PAGE = 'https://example.com/dir/page.html';

function doc(body: string, head = '', htmlAttrs = ''): string {
  return `<!doctype html><html${htmlAttrs}><head>${head}</head><body>${body}</body></html>`;
}

describe('extractHtml: headings', () => {
  it('h1–h6 in document order with their level and collapsed text, hidden ones left out', () => {
    const r = extractHtml(doc('<h1> Big  <b>news</b></h1><p>x</p><h3>Detail</h3><div hidden><h2>secret</h2></div><h6>Small</h6><h2></h2>'), PAGE);
    assert.deepEqual(r.headings, [
      { level: 1, text: 'Big news' },
      { level: 3, text: 'Detail' },
      { level: 6, text: 'Small' },
    ]);
  });
});

describe('extractHtml: OpenGraph and Twitter cards', () => {
  it('og:* by property, twitter:* by name, first value of a key wins; other meta ignored', () => {
    const head =
      '<meta property="og:title" content=" The  Title "><meta property="og:title" content="second">' +
      '<meta name="twitter:card" content="summary_large_image"><meta property="og:image" content="https://example.com/a.jpg">' +
      '<meta property="article:published_time" content="2024-03-14"><meta name="viewport" content="width=device-width">' +
      '<meta property="og:locale" content="de_DE">';
    const r = extractHtml(doc('<p>x</p>', head), PAGE);
    assert.deepEqual(r.openGraph, {
      'og:title': 'The Title',
      'twitter:card': 'summary_large_image',
      'og:image': 'https://example.com/a.jpg',
      'article:published_time': '2024-03-14',
      'og:locale': 'de_DE',
    });
    assert.equal(r.language, 'de-de', 'og:locale names the language when nothing else does');
    assert.equal(r.languageSource, 'markup');
  });
});

describe('extractHtml: JSON-LD', () => {
  it('parses blocks, spreads arrays, expands @graph keeping @context, skips and counts invalid ones', () => {
    const head =
      '<script type="application/ld+json">{"@context":"https://schema.org","@type":"Article","headline":"H"}</script>' +
      '<script type="application/ld+json">[{"@type":"Person","name":"A"},{"@type":"Person","name":"B"}]</script>' +
      '<script type="application/ld+json">{"@context":"https://schema.org","@graph":[{"@type":"WebSite","name":"S"},{"@type":"BreadcrumbList"}]}</script>' +
      '<script type="application/ld+json">{"@type": "Broken",}</script>' +
      '<script type="application/ld+json">"just a string"</script>' +
      '<script type="application/ld+json">\n<!--\n{"@type":"Commented"}\n-->\n</script>' +
      '<script type="application/json">{"@type":"NotLd"}</script>';
    const r = extractHtml(doc('<p>x</p>', head), PAGE);
    assert.deepEqual(r.jsonLd, [
      { '@context': 'https://schema.org', '@type': 'Article', headline: 'H' },
      { '@type': 'Person', name: 'A' },
      { '@type': 'Person', name: 'B' },
      { '@context': 'https://schema.org', '@type': 'WebSite', name: 'S' },
      { '@context': 'https://schema.org', '@type': 'BreadcrumbList' },
      { '@type': 'Commented' },
    ]);
    assert.equal(r.jsonLdInvalid, 2, 'the trailing-comma block and the bare string');
  });

  it('JSON-LD nested deeper than the cap is skipped and counted, not a stack overflow', async () => {
    const deep = '{"a":'.repeat(40_000) + '1' + '}'.repeat(40_000);
    const r = extractHtml(doc('<p>x</p>', `<script type="application/ld+json">${deep}</script><script type="application/ld+json">{"@type":"Ok"}</script>`), PAGE);
    assert.deepEqual(r.jsonLd, [{ '@type': 'Ok' }]);
    assert.equal(r.jsonLdInvalid, 1);
    const ok = '{"a":'.repeat(MAX_JSON_LD_DEPTH - 1) + '1' + '}'.repeat(MAX_JSON_LD_DEPTH - 1);
    assert.equal(extractHtml(doc('', `<script type="application/ld+json">${ok}</script>`), PAGE).jsonLd.length, 1, 'up to the cap is fine');
  });

  it('JSON-LD text never shows up in the visible text', () => {
    const r = extractHtml(doc('<p>visible</p><script type="application/ld+json">{"@type":"Thing","name":"ldMarker"}</script>'), PAGE);
    assert.doesNotMatch(r.text, /ldMarker/);
    assert.equal(r.jsonLd.length, 1);
  });
});

describe('extractHtml: link sources', () => {
  it('a, area, link rel alternate/next/prev, iframe and frame src, meta refresh — each with its source', () => {
    const head =
      '<link rel="next" href="?page=3"><link rel="prev" href="?page=1"><link rel="stylesheet" href="/s.css">' +
      '<link rel="alternate" type="application/rss+xml" title="Feed" href="/feed.xml"><link rel="canonical" href="/canon">' +
      '<meta http-equiv="refresh" content="5; URL=\'/moved\'">';
    const body =
      '<a href="/a">A</a><map><area href="/area" alt="Area"></map><iframe src="/embed"><p>fallback</p></iframe>' +
      '<iframe srcdoc="<p>x</p>"></iframe>';
    const r = extractHtml(doc(body, head), PAGE);
    assert.deepEqual(
      r.links.map((l) => [l.source, l.url, l.anchorText]),
      [
        ['link-next', 'https://example.com/dir/page.html?page=3', ''],
        ['link-prev', 'https://example.com/dir/page.html?page=1', ''],
        ['link-alternate', 'https://example.com/feed.xml', 'Feed'],
        ['meta-refresh', 'https://example.com/moved', ''],
        ['a', 'https://example.com/a', 'A'],
        ['area', 'https://example.com/area', 'Area'],
        ['iframe', 'https://example.com/embed', ''],
      ],
    );
    assert.equal(r.canonicalUrl, 'https://example.com/canon', 'canonical stays the canonical, not a link');
    assert.doesNotMatch(r.text, /fallback/);
  });

  it('<base href> applies to every source, hreflang alternates included', () => {
    const head =
      '<base href="https://cdn.example.org/base/"><link rel="alternate" hreflang="de-AT" href="de/">' +
      '<link rel="alternate" hreflang="x-default" href="/"><meta http-equiv="refresh" content="0;url=next.html">';
    const r = extractHtml(doc('<a href="x">x</a><iframe src="frame.html"></iframe>', head), PAGE);
    assert.deepEqual(
      r.links.map((l) => [l.source, l.url]),
      [
        ['link-alternate', 'https://cdn.example.org/base/de/'],
        ['link-alternate', 'https://cdn.example.org/'],
        ['meta-refresh', 'https://cdn.example.org/base/next.html'],
        ['a', 'https://cdn.example.org/base/x'],
        ['iframe', 'https://cdn.example.org/base/frame.html'],
      ],
    );
    assert.deepEqual(r.hreflang, [
      { lang: 'de-at', url: 'https://cdn.example.org/base/de/' },
      { lang: 'x-default', url: 'https://cdn.example.org/' },
    ]);
  });

  const refreshCases: Array<[string, string | null]> = [
    ['0; url=/next', '/next'],
    ['5;URL=\'https://example.org/x\'', 'https://example.org/x'],
    ['3, "quoted.html"', 'quoted.html'],
    ['10', null],
    ['  ', null],
    ['0; url=', null],
  ];
  for (const [content, target] of refreshCases) {
    it(`meta refresh ${JSON.stringify(content)} → ${String(target)}`, () => assert.equal(refreshTarget(content), target));
  }
});

describe('extractHtml: language', () => {
  const german =
    'Die Stadt will bis zum Jahr 2027 neue Radwege bauen. Der Stadtrat hat am Mittwoch dem Konzept zugestimmt, das vor allem die ' +
    'Verbindungen zwischen den Bezirken und der Innenstadt verbessern soll. Nach Angaben der Verwaltung sind mehr Menschen auf das Rad umgestiegen.';
  it('markup wins over detection: html lang, then Content-Language, then og:locale', () => {
    assert.equal(extractHtml(doc(`<p>${german}</p>`, '', ' lang="en"'), PAGE).language, 'en');
    assert.equal(extractHtml(doc(`<p>${german}</p>`, '<meta http-equiv="Content-Language" content="fr">'), PAGE).language, 'fr');
  });
  it('without markup the language is detected from the text, and null when unsure', () => {
    const r = extractHtml(doc(`<p>${german}</p>`), PAGE);
    assert.equal(r.language, 'de');
    assert.equal(r.languageSource, 'detected');
    const short = extractHtml(doc('<p>Hello there</p>'), PAGE);
    assert.equal(short.language, null);
    assert.equal(short.languageSource, null);
  });
  it('detectLanguage tells the covered languages apart on a few sentences', () => {
    const samples: Record<string, string> = {
      en: 'The council said that it would publish the plan for the new park in the spring, and that the work on the site could start when the money is there.',
      fr: 'Nous sommes partis un lundi matin avec deux sacoches, et il suffit de suivre les panneaux pour ne pas se perdre dans les vignes de la vallée.',
      es: 'El ayuntamiento ha dicho que la obra del parque empezará en la primavera, y que los vecinos podrán ver los planos en la biblioteca de la ciudad.',
      it: 'Il comune ha detto che i lavori per il parco inizieranno in primavera e che i cittadini potranno vedere il progetto nella biblioteca della città.',
      nl: 'De gemeente heeft gezegd dat het werk aan het park in het voorjaar begint en dat de bewoners de plannen in de bibliotheek van de stad kunnen zien.',
    };
    for (const [lang, text] of Object.entries(samples)) assert.equal(detectLanguage(text), lang, text);
  });
  it('detectLanguage names languages of other scripts, as the BCP 47 tags markup uses', () => {
    const samples: Record<string, string> = {
      ru: 'Городской совет сообщил, что план нового парка будет опубликован весной, а работы на участке начнутся, когда появятся деньги.',
      uk: 'Міська рада повідомила, що план нового парку буде оприлюднено навесні, а роботи на ділянці почнуться, коли з’являться гроші.',
      ar: 'قال مجلس المدينة إنه سينشر خطة الحديقة الجديدة في الربيع، وإن العمل في الموقع يمكن أن يبدأ عندما يتوفر المال اللازم لذلك.',
      hi: 'नगर परिषद ने कहा कि नए पार्क की योजना वसंत में प्रकाशित की जाएगी और पैसा मिलने पर स्थल पर काम शुरू हो सकता है।',
      ja: '市議会は、新しい公園の計画を春に公表し、資金が確保されしだい現地での工事を始めることができると発表しました。',
      zh: '市议会表示，新公园的规划将在春季公布，资金到位后即可开始施工，居民可以在城市图书馆查看设计图纸和相关说明。',
      ko: '시의회는 새 공원 계획을 봄에 발표할 것이며 예산이 마련되면 현장 공사를 시작할 수 있다고 밝혔습니다.',
      el: 'Το δημοτικό συμβούλιο ανακοίνωσε ότι το σχέδιο για το νέο πάρκο θα δημοσιευθεί την άνοιξη και ότι οι εργασίες θα ξεκινήσουν.',
    };
    for (const [lang, text] of Object.entries(samples)) assert.equal(detectLanguage(text), lang, text);
    assert.equal(detectLanguage('東京は日本の首都です。'), null, 'too short to tell: no guess');
  });
  it('iso6393OfTag gives the ISO 639-3 code cc-index uses for a BCP 47 tag', () => {
    assert.equal(iso6393OfTag('en-GB'), 'eng');
    assert.equal(iso6393OfTag('zh-Hant'), 'zho');
    assert.equal(iso6393OfTag('ar'), 'ara');
    assert.equal(iso6393OfTag('ceb'), 'ceb');
    assert.equal(iso6393OfTag('x'), null);
    assert.equal(iso6393OfTag(null), null);
  });
});
