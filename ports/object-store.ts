/**
 * The object store port: an S3-compatible bucket under a key prefix, as the outputs use it.
 * An object appears whole when its upload completes (S3 PUT semantics), so a writer that
 * uploads only finished files never shows a reader a partial one.
 */
export interface StoredObject {
  /** key relative to the store's prefix: `pages/crawl=x/date=…/version=0/part-….parquet` */
  key: string;
  size: number;
  lastModified: number;
}

export interface ObjectStore {
  /** `s3://bucket/prefix`, for messages and for readers that take URLs */
  readonly url: string;
  /** the object's URL: `s3://bucket/prefix/<key>` */
  urlOf(key: string): string;
  /** uploads a local file as one object (whole or not at all) */
  putFile(key: string, localPath: string): Promise<void>;
  /** every object under `prefix` (relative to the store's prefix) */
  list(prefix: string): AsyncIterable<StoredObject>;
  downloadFile(key: string, localPath: string): Promise<void>;
  /** `length` bytes from `offset` */
  readRange(key: string, offset: number, length: number): Promise<Uint8Array>;
  delete(keys: readonly string[]): Promise<void>;
}
