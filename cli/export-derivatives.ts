import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { derivativeInfo, watEnvelope, watRecord, wetRecord, type HtmlMeta, type ResponseSource, type WatLink } from '../app/export/derivative-records.js';
import { openOutputDatabase, type OutputDatabase } from '../pipeline/adapters/duckdb-views.js';
import { sqlString } from '../pipeline/adapters/sql-quote.js';
import { readWarcRecord } from '../pipeline/adapters/warc/read-record.js';
import { EXPORT_SOFTWARE } from './export-wacz.js';
import { UsageError } from './usage-error.js';

/** pages read at once: bounds the memory of an export of any size (their text, their links) */
const BATCH = 500;

interface PageRow {
  fetchId: string;
  url: string;
  fetchTime: number;
  title: string;
  text: string;
  languages: string | null;
  description: string | null;
  canonical: string | null;
  recordId: string;
  file: string;
  offset: number;
  length: number;
}

/**
 * The stored 2xx pages with the response (or identical-payload revisit) they were extracted
 * from, in WARC order. A fetch retried after a 5xx has that earlier response too: the 2xx one
 * is the page's.
 */
function pagesQuery(host: string | undefined, limit: number, offset: number): string {
  return `SELECT p.fetch_id, p.url, epoch_ms(p.fetch_time), p.title, p.text, p.content_languages, p.description, p.canonical_url,
      c.warc_record_id, c.warc_filename, c.warc_record_offset, c.warc_record_length
    FROM pages p JOIN captures c ON c.fetch_id = p.fetch_id AND c.warc_type IN ('response', 'revisit') AND c.fetch_status BETWEEN 200 AND 299
    WHERE p.fetch_status BETWEEN 200 AND 299${host ? ` AND p.url_host_name = ${sqlString(host.toLowerCase())}` : ''}
    QUALIFY row_number() OVER (PARTITION BY p.crawl_id, p.fetch_id ORDER BY c.capture_id DESC) = 1
    ORDER BY c.warc_filename, c.warc_record_offset, p.url
    LIMIT ${limit} OFFSET ${offset}`;
}

async function pageBatch(db: OutputDatabase, host: string | undefined, offset: number): Promise<PageRow[]> {
  const res = await db.run(pagesQuery(host, BATCH, offset));
  return res.rows.map((r) => ({
    fetchId: String(r[0]),
    url: String(r[1]),
    fetchTime: Number(r[2]),
    title: String(r[3] ?? ''),
    text: String(r[4] ?? ''),
    languages: r[5] === null ? null : String(r[5]),
    description: r[6] === null ? null : String(r[6]),
    canonical: r[7] === null ? null : String(r[7]),
    recordId: String(r[8]),
    file: String(r[9]),
    offset: Number(r[10]),
    length: Number(r[11]),
  }));
}

/** CC's `path` of a link: the element and the attribute it came from. */
const LINK_PATHS: Record<string, string> = { a: 'A@/href', area: 'AREA@/href', link: 'LINK@/href', img: 'IMG@/src', iframe: 'IFRAME@/src', frame: 'FRAME@/src', form: 'FORM@/action' };

async function linksOf(db: OutputDatabase, fetchIds: string[]): Promise<Map<string, WatLink[]>> {
  const out = new Map<string, WatLink[]>();
  if (fetchIds.length === 0) return out;
  const res = await db.run(`SELECT fetch_id, dst_url, anchor_text, rel, source FROM links WHERE fetch_id IN (${fetchIds.map(sqlString).join(', ')}) ORDER BY fetch_id`);
  for (const [id, url, text, rel, source] of res.rows) {
    const link: WatLink = { path: LINK_PATHS[String(source)] ?? `${String(source).toUpperCase()}@/href`, url: String(url) };
    if (text) link.text = String(text);
    if (rel) link.rel = String(rel);
    const list = out.get(String(id)) ?? [];
    list.push(link);
    out.set(String(id), list);
  }
  return out;
}

/** The response record's WARC and HTTP heads, read back from its WARC file by offset and length. */
async function responseOf(outDir: string, p: PageRow): Promise<ResponseSource> {
  const rec = await readWarcRecord(outDir, p.file, p.offset, p.length);
  const warcHeaders = rec.head.split('\r\n').slice(1).flatMap((line): Array<[string, string]> => {
    const i = line.indexOf(':');
    return i > 0 ? [[line.slice(0, i).trim(), line.slice(i + 1).trim()]] : [];
  });
  const httpEnd = rec.block.indexOf('\r\n\r\n');
  const httpHead = rec.block.subarray(0, httpEnd < 0 ? rec.block.length : httpEnd).toString('latin1');
  const [statusLine = '', ...lines] = httpHead.split('\r\n');
  const m = /^(HTTP\/\S+)\s+(\d{3})\s*(.*)$/.exec(statusLine);
  return {
    filename: path.basename(p.file),
    offset: p.offset,
    warcHeaders,
    warcHeaderLength: Buffer.byteLength(rec.head, 'utf8') + 4,
    blockDigest: rec.headers.get('warc-block-digest') ?? null,
    blockLength: rec.block.length,
    httpVersion: m?.[1] ?? '',
    status: m?.[2] ?? '',
    reason: m?.[3] ?? '',
    httpHeaders: lines.flatMap((line): Array<[string, string]> => {
      const i = line.indexOf(':');
      return i > 0 ? [[line.slice(0, i).trim(), line.slice(i + 1).trim()]] : [];
    }),
    httpHeadersLength: httpEnd < 0 ? rec.block.length : httpEnd + 4,
    entityLength: rec.payload.length,
    entityDigest: rec.headers.get('warc-payload-digest') ?? null,
  };
}

function htmlMetaOf(p: PageRow, links: WatLink[]): HtmlMeta {
  return {
    title: p.title,
    metas: p.description ? [{ name: 'description', content: p.description }] : [],
    headLinks: p.canonical ? [{ path: 'LINK@/href', url: p.canonical, rel: 'canonical' }] : [],
    links,
  };
}

/**
 * `crawl export wet|wat --to FILE`: the crawl's pages as Common Crawl's text (WET) or
 * metadata (WAT) files, gzip per record, written under a temporary name and renamed.
 */
export async function exportDerivative(format: 'wet' | 'wat', outDir: string, to: string, host: string | undefined): Promise<number> {
  const started = Date.now();
  const db = await openOutputDatabase(outDir);
  const tmp = `${to}.tmp-${process.pid}`;
  const fh = await fsp.open(tmp, 'w');
  let records = 0;
  try {
    const description = format === 'wet' ? 'Extracted main text of the crawled pages' : 'Metadata and links of the crawled pages';
    await fh.write(derivativeInfo(path.basename(to), started, EXPORT_SOFTWARE, description));
    for (let offset = 0; ; offset += BATCH) {
      let batch: PageRow[];
      try {
        batch = await pageBatch(db, host, offset);
      } catch (err) {
        if (/does not exist|not found/i.test((err as Error).message)) throw new UsageError(`no pages or captures in ${outDir} to export`);
        throw err;
      }
      if (batch.length === 0) break;
      const links = format === 'wat' ? await linksOf(db, batch.map((p) => p.fetchId)) : new Map<string, WatLink[]>();
      for (const p of batch) {
        const member =
          format === 'wet'
            ? wetRecord({ url: p.url, fetchTime: p.fetchTime, responseRecordId: p.recordId, title: p.title, text: p.text, languages: p.languages })
            : watRecord(p.url, p.fetchTime, p.recordId, watEnvelope(await responseOf(outDir, p), htmlMetaOf(p, links.get(p.fetchId) ?? [])));
        await fh.write(member);
        records++;
      }
      if (batch.length < BATCH) break;
    }
    if (records === 0) throw new UsageError(host ? `no stored pages of ${host} in ${outDir}` : `no stored pages in ${outDir}`);
    await fh.sync();
    await fh.close();
    await fsp.rename(tmp, to);
  } catch (err) {
    await fh.close().catch(() => undefined);
    await fsp.rm(tmp, { force: true });
    throw err;
  } finally {
    await db.close();
  }
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(`wrote ${to}: ${records} ${format === 'wet' ? 'conversion' : 'metadata'} records, one per stored page (${secs} s)\n`);
  return 0;
}
