/**
 * The WARC sink port: where the archive stage's records go. A record is written as its own
 * gzip member, so a reader can start at any record's offset; the members of one exchange are
 * appended together, whole, to the file open now. A file is closed and the next one started
 * before an append would take it past its size, and each file opens with the header member
 * (its warcinfo record) the writer of the records makes for it, whose record id the records
 * in the file name: so a build is handed the id of the file it lands in. Nothing appended is
 * durable before `sync` resolves. Adapters: pipeline/adapters/warc/ (local files, or files
 * uploaded to an object store once sealed).
 */

/** What a build makes: the gzip members, in file order, and whatever else the caller needs. */
export interface WarcMembers {
  members: readonly Uint8Array[];
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
