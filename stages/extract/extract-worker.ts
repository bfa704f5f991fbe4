/** A worker thread of the extract pool: decodes, parses and encodes off the main thread. */
import { ownedCopy, serveJobs } from '../../pipeline/worker-jobs.js';
import { SchemaError } from '../../schemas/index.js';
import { extractFetchedMessage } from './extract-page.js';
import type { PooledExtractJob, PooledExtractReply } from './pooled-handle.js';

serveJobs<PooledExtractJob, PooledExtractReply>(({ data, settings, body }) => {
  try {
    const extraction = extractFetchedMessage(data, settings, body);
    if ('needsBody' in extraction) return { output: extraction };
    const transfer: ArrayBuffer[] = [];
    for (const m of extraction.messages) {
      const owned = ownedCopy(m.data);
      m.data = owned;
      transfer.push(owned.buffer);
    }
    return { output: { extraction }, transfer };
  } catch (err) {
    // an undecodable message is an answer (dead-letter it), not a failure of the worker
    if (err instanceof SchemaError) return { output: { schemaError: err.message } };
    throw err;
  }
});
