/**
 * WARC files in a local directory (the WARC sink port, ports/warc-sink.ts). One file is open
 * at a time; an exchange's members are appended whole (one write), and a new file is started
 * once the next append would pass `maxBytes`. While a file is written a marker `<file>.open`
 * beside it names the writer (host, pid): a file whose marker names a dead writer is repaired
 * on start (repair.ts). The data file has its final name from the start, so the offsets a
 * `captures` row holds never point at a file that is renamed later.
 *
 * Its CDXJ index (cdxj-file.ts) is one file per WARC file, written when the WARC file is
 * sealed, sorted, before the marker goes: per file rather than per crawl, so that a file is
 * indexed once, by whoever sealed it, with no shared index to merge into or lock (several
 * archive processes write one output); and only once sealed, so that an index never names a
 * record a kill could still cut off. The entries of the open file are kept in memory until
 * then, a few hundred bytes a record; so that memory does not grow with how small the pages
 * are (a 1 GiB file of 4 kB records would hold 250,000), a file is also sealed at
 * {@link MAX_RECORDS_A_FILE} records.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BuildMembers, MakeWarcFileHeader, WarcAppended, WarcMembers, WarcSink } from '../../../ports/warc-sink.js';
import { cdxjLine } from '../../cdxj.js';
import { cdxjPathOf, writeCdxjFile } from './cdxj-file.js';

export const OPEN_SUFFIX = '.open';

/**
 * Records a WARC file holds at most, whatever its size: bounds the open file's index in memory
 * (a few hundred bytes a record) within the archive thread's share of a crawl's memory
 * budget. A crawl of small pages then gets more, smaller files rather than ones near
 * `--warc-max-bytes` (docs/performance.md#stages-on-two-threads has the measurement).
 */
export const MAX_RECORDS_A_FILE = 20_000;

export interface WriterMarker {
  pid: number;
  hostname: string;
  started: number;
}

export interface WarcFilesOptions {
  /** names the files: `CRAWL-<crawlId>-<time>-<serial>-<writer>.warc.gz` */
  crawlId: string;
  /** a file is closed and the next one started before an append would take it past this size */
  maxBytes: number;
  /** ...or past this many records (default MAX_RECORDS_A_FILE) */
  maxRecords?: number;
  /** the warcinfo record each file opens with */
  fileHeader: MakeWarcFileHeader;
}

/** 20240131235959 */
const compactTime = (d: Date): string => d.toISOString().replace(/[-:T]/g, '').slice(0, 14);

const byteLength = (members: readonly Uint8Array[]): number => members.reduce((n, m) => n + m.length, 0);

/** Starts a build; one that is never awaited (its file changed meanwhile) does not reject unhandled. */
function buildNow<T extends WarcMembers>(build: BuildMembers<T>, warcinfoId: string): Promise<T> {
  const p = (async () => build(warcinfoId))();
  p.catch(() => undefined);
  return p;
}

export class WarcFileSink implements WarcSink {
  private fh: fsp.FileHandle | null = null;
  private name = '';
  private size = 0;
  private serial = 0;
  private warcinfoId = '';
  /** records in the open file besides its warcinfo */
  private records = 0;
  /** CDXJ lines of the open file's records */
  private lines: string[] = [];
  private readonly unique = `${process.pid}-${randomBytes(3).toString('hex')}`;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly outDir: string,
    private readonly opts: WarcFilesOptions,
  ) {}

  get dir(): string {
    return path.join(this.outDir, 'warc');
  }

  /**
   * Appends the members `build(warcinfoId)` returns (built for the file they land in) and
   * resolves with where they went. Appends are written one at a time, in call order; the
   * build starts at once, for the file open now, rather than after the writes ahead of it.
   * In the rare case it lands in another file (the first one, or after a rotation) it is
   * built again for that one.
   */
  append<T extends WarcMembers>(build: BuildMembers<T>): Promise<WarcAppended<T>> {
    const builtFor = this.warcinfoId;
    const early = builtFor ? buildNow(build, builtFor) : null;
    const run = this.chain.then(async () => {
      if (!this.fh) await this.openNext();
      let built = early && builtFor === this.warcinfoId ? await early : await build(this.warcinfoId);
      const full = this.size + byteLength(built.members) > this.opts.maxBytes || this.records + built.members.length > (this.opts.maxRecords ?? MAX_RECORDS_A_FILE);
      if (full && this.records > 0) {
        await this.closeCurrent();
        await this.openNext();
        built = await build(this.warcinfoId); // built again: the records name their file's warcinfo
      }
      const { members } = built;
      const total = byteLength(members);
      const offsets: number[] = [];
      const lengths: number[] = [];
      let at = this.size;
      members.forEach((m, i) => {
        const entry = built.index?.[i];
        if (entry) this.lines.push(cdxjLine(entry, { offset: at, length: m.length, filename: this.name }));
        offsets.push(at);
        lengths.push(m.length);
        at += m.length;
      });
      // one write: a kill leaves either the whole exchange or a torn tail that repair cuts off
      await this.fh!.write(Buffer.concat(members, total), 0, total, this.size);
      this.size += total;
      this.records += members.length;
      return { filename: `warc/${this.name}`, offsets, lengths, built };
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Makes everything appended so far durable (the runner acks only after this). */
  sync(): Promise<void> {
    const run = this.chain.then(async () => {
      await this.fh?.sync();
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  close(): Promise<void> {
    const run = this.chain.then(() => this.closeCurrent());
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async openNext(): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true });
    this.serial += 1;
    const now = new Date();
    this.name = `CRAWL-${this.opts.crawlId}-${compactTime(now)}-${String(this.serial).padStart(5, '0')}-${this.unique}.warc.gz`;
    const file = path.join(this.dir, this.name);
    const marker: WriterMarker = { pid: process.pid, hostname: os.hostname(), started: now.getTime() };
    // the marker first: a file never exists without it until it is sealed. Written whole under a
    // temporary name and renamed, so a kill never leaves a half-written marker nobody can read
    await fsp.writeFile(file + OPEN_SUFFIX + '.tmp', JSON.stringify(marker));
    await fsp.rename(file + OPEN_SUFFIX + '.tmp', file + OPEN_SUFFIX);
    this.fh = await fsp.open(file, 'wx');
    const header = this.opts.fileHeader(this.name, now.getTime());
    this.warcinfoId = header.recordId;
    const info = header.member;
    await this.fh.write(info, 0, info.length, 0);
    this.size = info.length;
    this.records = 0;
    this.lines = [];
  }

  private async closeCurrent(): Promise<void> {
    if (!this.fh) return;
    await this.fh.sync();
    await this.fh.close();
    this.fh = null;
    const file = path.join(this.dir, this.name);
    // the index before the marker goes: a sealed file always has one (repair writes it otherwise)
    await writeCdxjFile(cdxjPathOf(file), this.lines);
    this.lines = [];
    await fsp.rm(file + OPEN_SUFFIX, { force: true });
  }
}
