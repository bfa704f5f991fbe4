// Deterministic generator of the test web: which hosts exist, what robots.txt each has,
// and what every path serves. Same options and seed -> identical model -> identical bytes.
//
// Layout of a site host (h00.site.test ...):
//   /                     home; nav links to the three hubs, footer link to /about.html
//   /articles/ /docs/ /blog/   hubs (depth 1), each the root of a 4-ary tree of content pages
//   /about.html
//   /articles/<slug>.html, /docs/<slug>, /docs/guide/<slug>, /blog/<yyyy>/<mm>/<slug>.html  content
//   /archive?page=1&sort=new, ...page=2   (every third host) pages addressed by query string
//   /private/<slug>.html, /private/press/<slug>.html   linked from public pages
//   /nocrawl/<slug>.html x2                            linked from public pages
//   /hidden/<slug>.html   only linked from the host's meta-robots nofollow page (if it has one)
//   /old-<slug>           301 to a content page
//   plus links to paths that 404, to other site hosts, and to out-of-scope external.example.
// Bench hosts (b000.bench.test ...) come from bench-host.ts; link forms from link-forms.ts.

import { buildBenchHost } from './bench-host.js';
import { computeHostDepths } from './host-depths.js';
import { crossHostHref, sameHostHref } from './link-forms.js';
import { chance, deriveSeed, mulberry32, pick, randInt, shuffled, type Rng } from './prng.js';
import { buildRobotsSpec, robotsKindForHost } from './robots-rules.js';
import { resolveLink } from './url-forms.js';
import { LABELS, WORDS, phrase, type PageLanguage } from './words.js';
import type {
  BuildSiteModelOptions,
  HostModel,
  HtmlResource,
  LinkArea,
  PageLink,
  PageRole,
  RedirectResource,
  Resource,
  SiteModel,
} from './model-types.js';

export const DEFAULT_PAGES_PER_HOST = 30;
export const DEFAULT_BENCH_PAGES_PER_HOST = 50;
/** Fixed pages of a site host (home, 3 hubs, about, 2 private, 2 nocrawl, hidden, 2 duplicates, 2 archive) + 6 content. */
const MIN_PAGES_PER_HOST = 20;
/** Per-host cap on same-host <a> links of one page (nav and footer included). */
const MAX_INTERNAL_LINKS = 15;

const SECTIONS = ['articles', 'docs', 'blog'] as const;
type Section = (typeof SECTIONS)[number];

export function siteHostName(index: number, hostCount: number): string {
  return `h${String(index).padStart(hostCount > 100 ? 3 : 2, '0')}.site.test`;
}

export function benchHostName(index: number, benchHostCount: number): string {
  return `b${String(index).padStart(benchHostCount > 1000 ? 4 : 3, '0')}.bench.test`;
}

/** Page language by host index: hosts 7, 27, ... are German; 13, 33, ... French; the rest English. */
export function languageForHost(index: number): PageLanguage {
  const r = index % 20;
  return r === 7 ? 'de' : r === 13 ? 'fr' : 'en';
}

// Per-host habits, by host index. Each is on a few hosts, and hosts 0..5 hold one of each
// (noindex 0, nofollow 1, base href 2, near-duplicate 0/2/5, exact duplicate 1, archive 0/3).
const hasNoindexPage = (i: number) => i % 4 === 0;
const hasNofollowPage = (i: number) => i % 5 === 1;
const baseHrefKind = (i: number): 'relative' | 'absolute' | null => (i % 12 === 2 ? 'relative' : i % 12 === 8 ? 'absolute' : null);
const hasNearDuplicate = (i: number) => [0, 2, 5, 13].includes(i % 20);
const hasExactDuplicate = (i: number) => i % 20 === 1;
const hasArchive = (i: number) => i % 3 === 0;

// ---------------------------------------------------------------- drafts (before hrefs exist)

/** A link before it has an href form: a same-host key, another host's key, or a literal href. */
type LinkTarget =
  | { kind: 'same'; key: string; area: LinkArea; plain?: boolean }
  | { kind: 'cross'; host: string; key: string; area: LinkArea }
  | { kind: 'literal'; href: string; area: LinkArea };

interface PageDraft {
  key: string;
  role: PageRole;
  section?: Section;
  treeDepth: number;
  targets: LinkTarget[];
  metaRobots?: 'noindex' | 'nofollow';
  baseHref?: string;
  copyOf?: string;
  nearCopyOf?: string;
}

interface HostDraft {
  name: string;
  index: number;
  lang: PageLanguage;
  pages: PageDraft[];
  byKey: Map<string, PageDraft>;
  redirects: Array<{ key: string; location: string }>;
  broken: string[];
}

function slugWords(lang: PageLanguage): string[] {
  // ASCII-only words keep paths free of percent-encoding, whatever the page language.
  return WORDS[lang].filter((w) => /^[a-z]{3,}$/.test(w));
}

function makeSlugger(rng: Rng, lang: PageLanguage): () => string {
  const words = slugWords(lang);
  const used = new Set<string>();
  return () => {
    for (;;) {
      const n = randInt(rng, 2, 4);
      const parts: string[] = [];
      for (let k = 0; k < n; k++) parts.push(pick(rng, words));
      const slug = parts.join('-');
      if (!used.has(slug)) {
        used.add(slug);
        return slug;
      }
    }
  };
}

/** Phase 1 of a site host: every page key and role, the trees, and the special pages. */
function draftSiteHost(index: number, name: string, seed: number, pagesPerHost: number): HostDraft {
  const rng = mulberry32(deriveSeed(seed, 'host', name));
  const lang = languageForHost(index);
  const slug = makeSlugger(rng, lang);
  const pages: PageDraft[] = [];
  const byKey = new Map<string, PageDraft>();
  const add = (p: PageDraft): PageDraft => {
    if (byKey.has(p.key)) throw new Error(`testweb: duplicate key ${p.key} on ${name}`);
    pages.push(p);
    byKey.set(p.key, p);
    return p;
  };
  const sameLink = (from: PageDraft, to: PageDraft | string, area: LinkArea = 'inline', plain = false) =>
    from.targets.push({ kind: 'same', key: typeof to === 'string' ? to : to.key, area, plain });

  const home = add({ key: '/', role: 'home', treeDepth: 0, targets: [] });
  const hubs = new Map<Section, PageDraft>();
  for (const s of SECTIONS) hubs.set(s, add({ key: `/${s}/`, role: 'hub', section: s, treeDepth: 1, targets: [] }));
  add({ key: '/about.html', role: 'about', treeDepth: 1, targets: [] });

  // How many pages the fixed roles take; the rest are content pages.
  const nofollow = hasNofollowPage(index);
  const fixed = 5 + 2 + 2 + (nofollow ? 1 : 0) + (hasExactDuplicate(index) ? 1 : 0) + (hasNearDuplicate(index) ? 1 : 0) + (hasArchive(index) ? 2 : 0);
  const contentCount = Math.max(pagesPerHost, MIN_PAGES_PER_HOST) - fixed;

  // Content pages: sections round-robin so each has several; each section is a 4-ary tree
  // under its hub (parent of the j-th page is page floor(j/4)-1, the hub for j < 4), so the
  // last page of a section is always a leaf: the nofollow, noindex and <base> pages sit there.
  const bySection = new Map<Section, PageDraft[]>(SECTIONS.map((s) => [s, []]));
  const year = 2019 + (index % 6);
  for (let k = 0; k < contentCount; k++) {
    const section = SECTIONS[k % 3] as Section;
    const list = bySection.get(section) as PageDraft[];
    const s = slug();
    const key =
      section === 'articles' ? `/articles/${s}.html`
      : section === 'docs' ? (k % 2 === 0 ? `/docs/${s}` : `/docs/guide/${s}`)
      : `/blog/${year + (k % 3)}/${String(1 + (k % 12)).padStart(2, '0')}/${s}.html`;
    const j = list.length;
    const parent = j < 4 ? (hubs.get(section) as PageDraft) : (list[Math.floor(j / 4) - 1] as PageDraft);
    const page = add({ key, role: 'content', section, treeDepth: parent.treeDepth + 1, targets: [] });
    sameLink(parent, page, parent.role === 'hub' ? 'related' : 'inline');
    list.push(page);
  }
  const lastOf = (s: Section) => {
    const list = bySection.get(s) as PageDraft[];
    return list[list.length - 1] as PageDraft;
  };
  if (nofollow) lastOf('articles').metaRobots = 'nofollow';
  if (hasNoindexPage(index)) lastOf('docs').metaRobots = 'noindex';
  const baseKind = baseHrefKind(index);
  if (baseKind) lastOf('blog').baseHref = baseKind === 'relative' ? '/docs/' : `http://${name}/docs/guide/`;

  // Pages that may carry extra links: public, followable, not a <base> page, shallow enough
  // that a page linked from them stays within depth 4.
  const carriers = () =>
    pages.filter((p) => ['home', 'hub', 'about', 'content', 'archive'].includes(p.role) && p.metaRobots !== 'nofollow' && !p.baseHref && p.treeDepth <= 3);
  const linkFromCarrier = (to: PageDraft) => {
    const from = pick(rng, carriers());
    sameLink(from, to);
    to.treeDepth = Math.min(to.treeDepth, from.treeDepth + 1);
  };

  if (hasArchive(index)) {
    const a1 = add({ key: '/archive?page=1&sort=new', role: 'archive', treeDepth: 1, targets: [] });
    const a2 = add({ key: '/archive?page=2&sort=new', role: 'archive', treeDepth: 2, targets: [] });
    sameLink(home, a1);
    sameLink(a1, a2);
    sameLink(a2, a1);
  }

  const contentPages = pages.filter((p) => p.role === 'content');
  const plainContent = contentPages.filter((p) => !p.metaRobots && !p.baseHref);

  const special = (key: string, role: PageRole): PageDraft => {
    const p = add({ key, role, treeDepth: 99, targets: [] });
    linkFromCarrier(p);
    return p;
  };
  special(`/private/${slug()}.html`, 'private');
  special(`/private/press/${slug()}.html`, 'private');
  special(`/nocrawl/${slug()}.html`, 'nocrawl');
  special(`/nocrawl/${slug()}.html`, 'nocrawl');

  if (nofollow) {
    // Only the nofollow page links here, so a crawler that honours nofollow never sees it.
    const hidden = add({ key: `/hidden/${slug()}.html`, role: 'hidden', treeDepth: 99, targets: [] });
    sameLink(lastOf('articles'), hidden);
  }
  // Duplicates live next to their original (same directory) and carry its links verbatim, so
  // relative links in the copied HTML resolve to the same targets.
  if (hasExactDuplicate(index)) {
    const original = pick(rng, plainContent);
    const copy = special(original.key.replace(/(\.html)?$/, '-print$1'), 'exact-duplicate');
    copy.copyOf = original.key;
  }
  if (hasNearDuplicate(index)) {
    const original = pick(rng, plainContent.filter((p) => byKey.get(p.key.replace(/(\.html)?$/, '-print$1')) === undefined));
    const copy = special(original.key.replace(/(\.html)?$/, '-updated$1'), 'near-duplicate');
    copy.nearCopyOf = original.key;
  }

  // A moved page: /old-<slug> answers 301 to a content page, and one public page still links to it.
  const redirectTarget = pick(rng, plainContent);
  const redirectKey = `/old-${slug()}`;
  const redirects = [{ key: redirectKey, location: index % 2 === 0 ? redirectTarget.key : `http://${name}${redirectTarget.key}` }];
  pick(rng, carriers()).targets.push({ kind: 'same', key: redirectKey, area: 'inline' });

  // Broken links: two paths nobody serves.
  const broken = [`/missing-${slug()}.html`, `/articles/${slug()}-deleted.html`];
  for (const key of broken) pick(rng, carriers()).targets.push({ kind: 'same', key, area: 'inline' });

  return { name, index, lang, pages, byKey, redirects, broken };
}

/** What other hosts may link to on a host: any page or redirect except the hidden ones. */
const crossTargetCache = new WeakMap<HostDraft[], Map<HostDraft, string[]>>();
function crossTargetsOf(allHosts: HostDraft[]): Map<HostDraft, string[]> {
  let map = crossTargetCache.get(allHosts);
  if (!map) {
    map = new Map(allHosts.map((h) => [h, [...h.pages.filter((p) => p.role !== 'hidden').map((p) => p.key), ...h.redirects.map((r) => r.key)]]));
    crossTargetCache.set(allHosts, map);
  }
  return map;
}

/** Phase 2: the links every page of a site host carries besides its tree links. */
function addChromeAndExtraLinks(host: HostDraft, allHosts: HostDraft[], seed: number): void {
  const rng = mulberry32(deriveSeed(seed, 'links', host.name));
  const linkable = host.pages.filter((p) => p.role !== 'hidden');
  const others = allHosts.filter((h) => h !== host);
  const crossTargets = crossTargetsOf(allHosts);
  for (const page of host.pages) {
    if (page.copyOf || page.nearCopyOf) continue; // duplicates get their original's links verbatim, below
    const nav: LinkTarget[] = [
      { kind: 'same', key: '/', area: 'nav', plain: true },
      ...SECTIONS.map((s): LinkTarget => ({ kind: 'same', key: `/${s}/`, area: 'nav', plain: true })),
    ];
    const footer: LinkTarget[] = [{ kind: 'same', key: '/about.html', area: 'footer', plain: true }];
    const body = page.targets;
    const room = MAX_INTERNAL_LINKS - nav.length - footer.length - body.length;
    const extras = Math.min(randInt(rng, 1, 4), Math.max(0, room));
    for (let k = 0; k < extras; k++) {
      body.push({ kind: 'same', key: pick(rng, linkable).key, area: chance(rng, 0.5) ? 'inline' : 'related' });
    }
    if (others.length > 0) {
      const n = randInt(rng, 1, 3);
      for (let k = 0; k < n; k++) {
        const other = pick(rng, others);
        body.push({ kind: 'cross', host: other.name, key: pick(rng, crossTargets.get(other) as string[]), area: chance(rng, 0.5) ? 'inline' : 'related' });
      }
    }
    if (chance(rng, 0.12)) {
      body.push({ kind: 'literal', href: pick(rng, ['http://external.example/page', `https://www.external.example/ref?from=${host.name}`, 'http://external.example/']), area: 'related' });
    }
    if (page.role === 'home') {
      body.push({ kind: 'literal', href: `mailto:webmaster@${host.name}`, area: 'related' });
      body.push({ kind: 'literal', href: 'javascript:void(0)', area: 'related' });
    }
    if (page.role === 'about') body.push({ kind: 'literal', href: 'tel:+15555550100', area: 'related' });
    page.targets = [...nav, ...shuffled(rng, body), ...footer];
  }
  for (const page of host.pages) {
    const original = page.copyOf ?? page.nearCopyOf;
    if (original) page.targets = (host.byKey.get(original) as PageDraft).targets;
  }
}

function anchorText(rng: Rng, lang: PageLanguage, area: LinkArea, key: string): string {
  const labels = LABELS[lang];
  if (area === 'nav' || area === 'footer') {
    if (key === '/') return labels.home;
    if (key === '/about.html') return labels.contact;
    const section = key.slice(1, -1) as Section;
    return section in labels ? labels[section as 'articles' | 'docs' | 'blog'] : key;
  }
  return phrase(rng, lang, 2, 5);
}

/** Phase 3: hrefs, titles, and the resources of a site host. */
function finishSiteHost(host: HostDraft, seed: number): HostModel {
  const resources = new Map<string, Resource>();
  const rng = mulberry32(deriveSeed(seed, 'hrefs', host.name));
  const hrefsOf = new Map<string, PageLink[]>();
  for (const page of host.pages) {
    if (page.copyOf || page.nearCopyOf) continue;
    const pageUrl = `http://${host.name}${page.key}`;
    const links: PageLink[] = page.targets.map((t) => {
      const href =
        t.kind === 'same' ? (t.plain ? t.key : sameHostHref(rng, host.name, page.key, page.baseHref, t.key))
        : t.kind === 'cross' ? crossHostHref(rng, t.host, t.key)
        : t.href;
      // Self-check: every generated form must resolve to the intended target.
      if (t.kind !== 'literal') {
        const want = `http://${t.kind === 'same' ? host.name : t.host}${t.key}`;
        const got = resolveLink(pageUrl, page.baseHref, href);
        if (got !== want) throw new Error(`testweb: link ${href} on ${pageUrl} resolves to ${got}, expected ${want}`);
      }
      const key = t.kind === 'literal' ? t.href : t.key;
      return { href, text: anchorText(rng, host.lang, t.area, key), area: t.area };
    });
    hrefsOf.set(page.key, links);
  }
  for (const page of host.pages) {
    const source = page.copyOf ?? page.nearCopyOf ?? page.key;
    const pageRng = mulberry32(deriveSeed(seed, 'page', host.name, source));
    const title = phrase(pageRng, host.lang, 3, 7);
    const description = `${phrase(pageRng, host.lang, 12, 20)}.`;
    const structuredData = chance(pageRng, 0.3);
    const withCanonical = chance(pageRng, 0.5);
    const res: HtmlResource = {
      kind: 'html',
      status: 200,
      path: page.key,
      role: page.role,
      lang: host.lang,
      title: page.nearCopyOf ? `${title} (2)` : title,
      description,
      links: hrefsOf.get(source) as PageLink[],
      textSeed: deriveSeed(seed, 'text', host.name, source),
      wordChanges: page.nearCopyOf ? 4 : 0,
      structuredData,
      depthFromHostRoot: null,
    };
    // Canonical always names the page itself; exact duplicates and their originals have none,
    // so the pair stays byte-identical.
    const isDupOriginal = host.pages.some((p) => p.copyOf === page.key);
    if (withCanonical && !page.copyOf && !isDupOriginal) res.canonical = `http://${host.name}${page.key}`;
    if (page.baseHref) res.baseHref = page.baseHref;
    if (page.metaRobots) res.metaRobots = page.metaRobots;
    if (page.copyOf) res.duplicateOf = page.copyOf;
    if (page.nearCopyOf) res.nearDuplicateOf = page.nearCopyOf;
    resources.set(page.key, res);
  }
  for (const r of host.redirects) {
    const red: RedirectResource = { kind: 'redirect', status: 301, path: r.key, location: r.location, depthFromHostRoot: null };
    resources.set(r.key, red);
  }
  const robots = buildRobotsSpec(host.name, robotsKindForHost(host.index));
  const model: HostModel = { name: host.name, index: host.index, group: 'site', lang: host.lang, robots, resources, brokenLinkPaths: host.broken };
  if (robots.crawlDelay !== undefined) model.crawlDelay = robots.crawlDelay;
  return model;
}

// ---------------------------------------------------------------- entry point

export function buildSiteModel(opts: BuildSiteModelOptions): SiteModel {
  const hostCount = Math.max(0, Math.floor(opts.hosts));
  const benchCount = Math.max(0, Math.floor(opts.benchHosts ?? 0));
  const pagesPerHost = opts.pagesPerHost ?? DEFAULT_PAGES_PER_HOST;
  const benchPages = opts.benchPagesPerHost ?? DEFAULT_BENCH_PAGES_PER_HOST;
  const seed = opts.seed >>> 0;

  const siteHostNames = Array.from({ length: hostCount }, (_, i) => siteHostName(i, hostCount));
  const benchHostNames = Array.from({ length: benchCount }, (_, i) => benchHostName(i, benchCount));
  const drafts = siteHostNames.map((name, i) => draftSiteHost(i, name, seed, pagesPerHost));
  for (const d of drafts) addChromeAndExtraLinks(d, drafts, seed);
  const hosts: HostModel[] = drafts.map((d) => finishSiteHost(d, seed));
  benchHostNames.forEach((name, i) => hosts.push(buildBenchHost(i, name, benchHostNames, seed, benchPages)));
  for (const h of hosts) computeHostDepths(h);
  return { seed, hosts, byName: new Map(hosts.map((h) => [h.name, h])), siteHostNames, benchHostNames };
}
