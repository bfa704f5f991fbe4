/**
 * The main text of a page is, line for line, a selection of the lines of its full visible
 * text (both have one line per block; main-text.ts keeps some blocks and drops the rest). The
 * extracted and final page messages carry both, so on the wire the main text is sent as the
 * runs of full-text lines it is made of: about half the bytes of a text-heavy page on two
 * streams, and less for nats-server to store and for every stage to encode and decode.
 */

/**
 * The lines of `full` that make up `main`, as flat [start, count, start, count, …] runs, or
 * null when `main` is not such a selection (cut to a byte budget mid-line, say): then it is
 * sent as it is.
 */
export function linesOf(main: string, full: string): number[] | null {
  if (main === '' || full === '') return null;
  const fullLines = full.split('\n');
  const runs: number[] = [];
  let at = 0; // next full line to compare
  let start = 0;
  while (start <= main.length) {
    let end = main.indexOf('\n', start);
    if (end < 0) end = main.length;
    const line = main.slice(start, end);
    while (at < fullLines.length && fullLines[at] !== line) at++;
    if (at === fullLines.length) return null;
    const last = runs.length - 2;
    if (last >= 0 && runs[last]! + runs[last + 1]! === at) runs[last + 1]! += 1;
    else runs.push(at, 1);
    at++;
    start = end + 1;
  }
  return runs;
}

/** The text `linesOf` described; throws if the runs do not fit `full` (a corrupt message). */
export function textFromLines(full: string, runs: readonly number[]): string {
  const fullLines = full.split('\n');
  const out: string[] = [];
  if (runs.length % 2 !== 0) throw new Error('text_lines: odd number of entries');
  for (let i = 0; i < runs.length; i += 2) {
    const start = runs[i]!;
    const count = runs[i + 1]!;
    if (start + count > fullLines.length) throw new Error(`text_lines: lines ${start}..${start + count} of ${fullLines.length}`);
    for (let j = start; j < start + count; j++) out.push(fullLines[j]!);
  }
  return out.join('\n');
}
