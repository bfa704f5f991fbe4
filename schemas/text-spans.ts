/**
 * The main text of a page is, line for line, a selection of the lines of its full visible
 * text (both have one line per block; main-text.ts keeps some blocks and drops the rest). The
 * extracted and final page messages carry both, so on the wire the main text is sent as the
 * spans of the full text it is made of: about half the bytes of a text-heavy page on two
 * streams, and less for nats-server to store and for every stage to encode and decode.
 */

/** Whether `full` has a whole line equal to `line` starting at `at`. */
function wholeLineAt(full: string, line: string, at: number): boolean {
  const end = at + line.length;
  return (at === 0 || full.charCodeAt(at - 1) === 10) && (end === full.length || full.charCodeAt(end) === 10);
}

/** The first whole line of `full` equal to `line` that starts at or after `from`, or -1. */
function findLine(full: string, line: string, from: number): number {
  for (let at = full.indexOf(line, from); at >= from && at <= full.length; at = full.indexOf(line, at + 1)) {
    if (wholeLineAt(full, line, at)) return at;
    if (at === full.length) break; // indexOf of '' past the end keeps answering the end
  }
  return -1;
}

/**
 * The spans of `full` whose lines make up `main`, as flat [start, length, start, length, …]
 * in UTF-16 code units (each span whole lines; adjacent lines share a span), or null when
 * `main` is not such a selection (cut to a byte budget mid-line, say): then it is sent as it is.
 */
export function spansOf(main: string, full: string): number[] | null {
  if (main === '' || full === '') return null;
  const spans: number[] = [];
  let from = 0; // where the next line of main may start in full
  let start = 0;
  while (start <= main.length) {
    let end = main.indexOf('\n', start);
    if (end < 0) end = main.length;
    const line = main.slice(start, end);
    const at = findLine(full, line, from);
    if (at < 0) return null;
    const last = spans.length - 2;
    // the line right after the previous span's last line: extend the span over the '\n'
    if (last >= 0 && spans[last]! + spans[last + 1]! + 1 === at) spans[last + 1]! += line.length + 1;
    else spans.push(at, line.length);
    from = at + line.length + 1;
    start = end + 1;
  }
  return spans;
}

/** The text `spansOf` described; throws if the spans do not fit `full` (a corrupt message). */
export function textFromSpans(full: string, spans: readonly number[]): string {
  if (spans.length % 2 !== 0) throw new Error('text_spans: odd number of entries');
  const parts: string[] = [];
  for (let i = 0; i < spans.length; i += 2) {
    const start = spans[i]!;
    const length = spans[i + 1]!;
    if (start + length > full.length) throw new Error(`text_spans: ${start}+${length} is past the end of the full text (${full.length})`);
    parts.push(full.slice(start, start + length));
  }
  return parts.join('\n');
}
