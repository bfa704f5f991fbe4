import { encodeFinal, encodeFinalOnWire, isOnWire, type ExtractedHead, type ExtractedOnWire, type ExtractedPage } from '../../schemas/index.js';
import { subjectFor } from '../../pipeline/partition.js';
import { emit, type Disposition, type StageContext, type StageInput } from '../../pipeline/stage.js';
import { findOriginal } from './find-original.js';
import { simhashAndWords, simhashToHex } from '../shared/content-identity/simhash.js';
import { notePage } from '../shared/traps/trap-tally.js';
import { urlPattern } from '../shared/traps/url-pattern.js';
import { crawlIdOf } from '../shared/jobs/job-fields.js';
import { revisitEmit } from '../shared/revisits/revisit-emit.js';
import { noteStoredDomain } from '../shared/breadth/first-pass.js';

/** Pages with fewer words than this are not compared: short texts collide by chance. */
const MIN_WORDS_FOR_NEAR_DUP = 20;

/** A page as extract sent it, its text and links undecoded; or, from before extract made the fingerprint, decoded whole. */
export type SimhashInput = ExtractedOnWire | ExtractedPage;

export async function handleSimhash(input: StageInput<SimhashInput>, ctx: StageContext): Promise<Disposition> {
  const m = input.message;
  const p: ExtractedHead | ExtractedPage = isOnWire(m) ? m.head : m;
  // made by extract; a message from before it did (a replayed stream) gets it here. Words are
  // counted as the fingerprint counts them, so texts without spaces (CJK) are compared too
  const { hex, words } = fingerprintOf(p);
  const nearDuplicateOf =
    words > MIN_WORDS_FOR_NEAR_DUP
      ? await findOriginal(ctx.kv.fingerprints, { h: hex, url: p.url, t: p.fetch_time }, p.content_digest, ctx.settings.nearDuplicateDistance)
      : null;
  ctx.metrics.count('simhash', 'pages', nearDuplicateOf ? 'near_duplicate' : 'unique');
  // content novelty of the page's URL pattern, for the gate's crawl-trap defence (trap-tally.ts);
  // only pages long enough to be compared count. A redelivered page may be counted twice: that
  // moves a share of many pages by one, which the threshold tolerates.
  if (ctx.settings.noveltyMinPages > 0 && words > MIN_WORDS_FOR_NEAR_DUP) {
    await notePage(ctx.kv.traps, { crawl: crawlIdOf(ctx, p), host: p.host }, urlPattern(p.url), nearDuplicateOf !== null);
  }
  // a domain's first stored page counts toward --target-unique-domains (first-pass.ts)
  await noteStoredDomain(ctx, p);
  // a crawl job's page: its next revisit, sooner if it changed since the last copy
  const revisit = await revisitEmit(ctx, p, p.fetch_id, { kind: 'page', digest: p.content_digest, simhash: hex }, {
    etag: p.validators?.etag ?? null,
    lastModified: p.validators?.last_modified ?? null,
    lastModifiedAt: p.last_modified,
  });
  const verdict = { near_duplicate_of: nearDuplicateOf, ...(revisit.note ? { revisit_note: revisit.note } : {}), ...revisit.schedule };
  return emit(
    {
      subject: subjectFor('pages', p.host, ctx.settings.partitions),
      msgId: `page:${p.fetch_id}`,
      data: isOnWire(m) ? encodeFinalOnWire(m, verdict) : encodeFinal({ ...m, simhash: hex, ...verdict }),
    },
    ...revisit.emits,
  );
}

function fingerprintOf(p: ExtractedHead | ExtractedPage): { hex: string; words: number } {
  if (p.simhash !== undefined && p.text_words !== undefined) return { hex: p.simhash, words: p.text_words };
  const { hash, words } = simhashAndWords('text' in p ? p.text : '');
  return { hex: simhashToHex(hash), words };
}
