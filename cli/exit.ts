/**
 * How a command ends. Output to a pipe is written asynchronously, and `process.exit` drops
 * whatever the pipe has not taken yet (a `crawl sql ... | jq` used to end at the pipe's
 * 64 KiB buffer), so a command exits only once stdout and stderr have drained. A reader
 * that stops early (`| head -1`) closes the pipe: that ends the command quietly, status 0,
 * as it does for other Unix tools.
 */

/** Resolves once everything written to `stream` so far has been handed to the OS. */
function drained(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.writableLength === 0 || stream.destroyed) return resolve();
    // write callbacks run in order: this one runs after every earlier chunk is flushed
    stream.write('', () => resolve());
  });
}

export async function exitWhenDrained(code: number): Promise<never> {
  await Promise.all([drained(process.stdout), drained(process.stderr)]);
  process.exit(code);
}

/** A closed stdout (the reader went away) ends the command with status 0 and no error output. */
export function endQuietlyOnClosedPipe(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') process.exit(0);
    process.stderr.write(`crawl: writing output: ${err.message}\n`);
    process.exit(1);
  });
}
