/**
 * The WARC files of one archive process. One file is open at a time; records are appended
 * whole (one write per exchange), and a new file is started once the next append would
 * pass `maxBytes`. While a file is written a marker `<file>.open` beside it names the
 * writer (host, pid): a file whose marker names a dead writer is repaired on start
 * (warc-repair.ts). The data file has its final name from the start, so the offsets a
 * `captures` row holds never point at a file that is renamed later.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newRecordId, warcinfoRecord } from './warc-record.js';

export const OPEN_SUFFIX = '.open';

export interface WriterMarker {
  pid: number;
  hostname: string;
  started: number;
}

export interface Placement {
  /** file name relative to the output directory: `warc/<name>` */
  filename: string;
  /** offset of each appended member */
  offsets: number[];
  lengths: number[];
}

/** 20240131235959 */
const compactTime = (d: Date): string => d.toISOString().replace(/[-:T]/g, '').slice(0, 14);

const byteLength = (members: Buffer[]): number => members.reduce((n, m) => n + m.length, 0);

/** What a build returns: the gzip members, in file order, and whatever else the caller needs. */
export interface Built {
  members: Buffer[];
}

export type Appended<T> = Placement & { built: T };

/** Makes an exchange's records for the file whose warcinfo record has this id (the records name it). */
export type BuildRecords<T> = (warcinfoId: string) => T | Promise<T>;

/** Starts a build; one that is never awaited (its file changed meanwhile) does not reject unhandled. */
function buildNow<T>(build: BuildRecords<T>, warcinfoId: string): Promise<T> {
  const p = (async () => build(warcinfoId))();
  p.catch(() => undefined);
  return p;
}

/** What the archive's sink writes exchanges through: a local WARC file, or one uploaded per batch. */
export interface WarcWriter {
  append<T extends Built>(build: BuildRecords<T>): Promise<Appended<T>>;
  /** makes everything appended so far durable */
  sync(): Promise<void>;
  close(): Promise<void>;
}

export class WarcFileWriter implements WarcWriter {
  private fh: fsp.FileHandle | null = null;
  private name = '';
  private size = 0;
  private serial = 0;
  private warcinfoId = '';
  /** records in the open file besides its warcinfo */
  private records = 0;
  private readonly unique = `${process.pid}-${randomBytes(3).toString('hex')}`;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly outDir: string,
    private readonly opts: { crawlId: string; maxBytes: number; software: string },
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
  append<T extends Built>(build: BuildRecords<T>): Promise<Appended<T>> {
    const builtFor = this.warcinfoId;
    const early = builtFor ? buildNow(build, builtFor) : null;
    const run = this.chain.then(async () => {
      if (!this.fh) await this.openNext();
      let built = early && builtFor === this.warcinfoId ? await early : await build(this.warcinfoId);
      if (this.size + byteLength(built.members) > this.opts.maxBytes && this.records > 0) {
        await this.closeCurrent();
        await this.openNext();
        built = await build(this.warcinfoId); // built again: the records name their file's warcinfo
      }
      const { members } = built;
      const total = byteLength(members);
      const offsets: number[] = [];
      const lengths: number[] = [];
      let at = this.size;
      for (const m of members) {
        offsets.push(at);
        lengths.push(m.length);
        at += m.length;
      }
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
    this.warcinfoId = newRecordId();
    const info = warcinfoRecord(this.warcinfoId, this.name, now.getTime(), [
      ['software', this.opts.software],
      ['format', 'WARC File Format 1.1'],
      ['conformsTo', 'https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/'],
      ['isPartOf', this.opts.crawlId],
      ['hostname', os.hostname()],
      ['robots', 'obey'],
      ['http-body', 'stored decoded (Content-Encoding removed); original transfer headers as X-Crawler-*'],
    ]);
    await this.fh.write(info, 0, info.length, 0);
    this.size = info.length;
    this.records = 0;
  }

  private async closeCurrent(): Promise<void> {
    if (!this.fh) return;
    await this.fh.sync();
    await this.fh.close();
    this.fh = null;
    await fsp.rm(path.join(this.dir, this.name + OPEN_SUFFIX), { force: true });
  }
}
