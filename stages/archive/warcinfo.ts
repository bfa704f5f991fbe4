import os from 'node:os';
import type { MakeWarcFileHeader } from '../../ports/warc-sink.js';
import { newRecordId, warcinfoRecord } from './warc-record.js';

/** The warcinfo record each WARC file opens with: what wrote it, for which crawl, and how bodies are stored. */
export function warcinfoHeader(crawlId: string, software: string): MakeWarcFileHeader {
  return (filename, openedAt) => {
    const recordId = newRecordId();
    const member = warcinfoRecord(recordId, filename, openedAt, [
      ['software', software],
      ['format', 'WARC File Format 1.1'],
      ['conformsTo', 'https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/'],
      ['isPartOf', crawlId],
      ['hostname', os.hostname()],
      ['robots', 'obey'],
      ['http-body', 'stored decoded (Content-Encoding removed); original transfer headers as X-Crawler-*'],
    ]);
    return { recordId, member };
  };
}
