/**
 * The WARC sink port: where the archive stage's records go. A record is written as its own
 * gzip member, so a reader can start at any record's offset; the members of one exchange are
 * appended together, whole, to the file open now. A file is closed and the next one started
 * before an append would take it past its size, and each file opens with the header member
 * (its warcinfo record) the writer of the records makes for it, whose record id the records
 * in the file name: so a build is handed the id of the file it lands in. Nothing appended is
 * durable before `sync` resolves. A sealed file has a CDXJ index beside it
 * (`<name>.cdxj` for `<name>.warc.gz`), written after the file is sealed. Adapters: pipeline/adapters/warc/ (local files, or files
 * uploaded to an object store once sealed).
 */

/**
 * A record's CDXJ index entry (pywb's format), known when the record is built; where it
 * landed (offset, length, file) is added by the sink. Values as warcio.js and pywb write
 * them: `status` a string, `digest` without its `sha1:` prefix; absent when unknown.
 */
export interface CdxjEntry {
  /** SURT key */
  urlkey: string;
  /** 14 digits, UTC */
  timestamp: string;
  url: string;
  mime?: string;
  status?: string;
  digest?: string;
}

/** What a build makes: the gzip members, in file order, and whatever else the caller needs. */
export interface WarcMembers {
  members: readonly Uint8Array[];
  /**
   * The index entry of each member (same order), null for a record replay does not look up
   * (request, warcinfo, a metadata record of warc-fields). The sink writes the entries of a
   * file to its CDXJ index when it seals the file.
   */
  index?: readonly (CdxjEntry | null)[];
}

/** Makes an exchange's members for the file whose warcinfo record has this id. */
export type BuildMembers<T extends WarcMembers> = (warcinfoId: string) => T | Promise<T>;

/** Where an append's members went. */
export interface WarcPlacement {
  /** file name relative to the output: `warc/<name>`, the name a `captures` row holds */
  filename: string;
  /** offset of each appended member */
  offsets: number[];
  /** length of each appended member */
  lengths: number[];
}

export type WarcAppended<T> = WarcPlacement & { built: T };

/** The member a new file opens with (a warcinfo record), and that record's id. */
export interface WarcFileHeader {
  recordId: string;
  member: Uint8Array;
}

/** Makes the header of a new file, given its name and when it was opened (epoch ms). */
export type MakeWarcFileHeader = (filename: string, openedAt: number) => WarcFileHeader;

export interface WarcSink {
  /** Appends the members `build` makes for the file they land in; resolves with where they went. Appends land in call order. */
  append<T extends WarcMembers>(build: BuildMembers<T>): Promise<WarcAppended<T>>;
  /** Makes everything appended so far durable. */
  sync(): Promise<void>;
  /** Seals the file open now; nothing is appended after. */
  close(): Promise<void>;
}
