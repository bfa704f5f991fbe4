// A text sitemap (https://www.sitemaps.org/protocol.html#otherformats): one URL a line, UTF-8,
// nothing else. Blank lines are skipped; any other line that is not a URL the sitemap may
// list is dropped with its reason.

import type { EntryCollector } from './collector.js';

export interface TextSink {
  /** Takes the next piece of the decoded file; throws StopParsing to end the parse. */
  write(text: string): void;
  /** The file is over (or cut at the byte limit: then the last line may be cut too, and is not read). */
  end(cut: boolean): void;
  /** Why the file is invalid, once it is known to be. */
  readonly error: string | undefined;
}

export function textSitemapSink(collector: EntryCollector, maxUrlLength: number): TextSink {
  // A line is kept whole only up to twice the URL limit: anything longer is dropped as too long
  // anyway, and a 50 MB line must not be held in memory.
  const lineCap = 2 * maxUrlLength;
  let pending = '';
  const line = (text: string) => {
    const loc = text.trim();
    if (loc !== '') collector.add({ loc });
  };
  return {
    error: undefined,
    write(text) {
      const lines = text.split(/\r\n|\r|\n/);
      lines[0] = pending + lines[0];
      pending = lines.pop()!.slice(0, lineCap);
      for (const l of lines) line(l);
    },
    end(cut) {
      if (!cut) line(pending);
      pending = '';
    },
  };
}
