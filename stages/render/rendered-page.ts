/**
 * What a render ends in: the page back to extract on `crawl.fetched.rendered.<p>`, now with the DOM as its body
 * (or, when rendering failed for good, as fetched), marked so extract does not send it back,
 * and for the archive a record of the DOM that points at the response it was rendered from.
 */
import { encodeExchange, type ArchivedExchange, type RenderRequest } from '../../schemas/index.js';
import { subjectFor } from '../../pipeline/partition.js';
import type { Emit } from '../../pipeline/stage.js';
import type { RenderResult } from '../../ports/browser.js';
import { cutToBytes } from '../shared/messages/message-budget.js';
import type { PlacedBody } from '../shared/messages/page-body.js';
import type { RenderSession } from './render-session.js';

/** `fetched:<id>` is the page as fetch published it; the render's version must not be taken for a duplicate of it. */
const renderedMsgId = (fetchId: string) => `rendered:${fetchId}`;

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** fetch_log's note on a rendered page: why it was rendered, how the render ended, what its requests came to. */
export function renderNote(page: RenderRequest, r: RenderResult, session: RenderSession, timeoutMs: number): string {
  const ended = r.settled
    ? `settled after ${r.durationMs} ms`
    : `stopped at the render timeout (${timeoutMs} ms) before the page settled${r.loaded ? '' : ' (it never finished loading)'}${r.pending > 0 ? `, ${plural(r.pending, 'request')} still open` : ''}`;
  const c = session.counts;
  const parts = [`${plural(c.fetched, 'request')} made`];
  if (c.cached > 0) parts.push(`${c.cached} from cache`);
  if (c.failed > 0) parts.push(`${c.failed} failed`);
  if (c.blocked > 0) parts.push(`${c.blocked} blocked`);
  const why = [...session.blockedBy].map(([k, n]) => `${k} ${n}`).join(', ');
  return `rendered (${page.render_reason}): ${ended}; ${parts.join(', ')}${why ? ` (${why})` : ''}`;
}

/** The DOM as the rendered page's body: UTF-8, cut to `maxBytes` (`cut` says whether it was). */
export function domBody(html: string, maxBytes: number): { bytes: Uint8Array; cut: boolean } {
  const kept = cutToBytes(html, maxBytes);
  return { bytes: new TextEncoder().encode(kept), cut: kept.length < html.length };
}

/**
 * The rendered page, for extract (its body) and the archive (its exchange: a record of the
 * DOM): `dom` is the DOM's body as the message carries it, `sourceDigest` the digest of the
 * response it was rendered from.
 */
export function renderedPageEmit(page: RenderRequest, dom: { placed: PlacedBody; cut: boolean }, sourceDigest: string, note: string, session: RenderSession, partitions: number): Emit {
  // the fetched page's body_ref is the response's, not the DOM's
  const { render_reason: _reason, body_ref: _ref, ...fetched } = page;
  const message: ArchivedExchange = {
    ...fetched,
    // the DOM is serialized as UTF-8 whatever the page was sent in; the header says so, so a
    // <meta charset> the page carried does not mislead the decoder
    content_type: 'text/html',
    charset: 'utf-8',
    headers: { ...page.headers, 'content-type': 'text/html; charset=utf-8' },
    ...dom.placed,
    truncated: page.truncated || dom.cut,
    rendered: true,
    render_note: note,
    exchange: {
      kind: 'rendered',
      capture_id: `${page.fetch_id}:rendered`,
      method: 'GET',
      request_headers: [],
      status_text: '',
      remote_ip: null,
      failure: null,
      redirect: null,
      robots: null,
      refers_to_date: page.fetch_time,
      attempt: 0,
      refers_to_digest: sourceDigest,
      render_log: session.log,
    },
  };
  return { subject: subjectFor('rendered', page.host, partitions), msgId: renderedMsgId(page.fetch_id), data: encodeExchange(message) };
}

/**
 * Rendering failed for good: the page goes on as fetched, with the reason (its body as it
 * came: a body stored beside it stays there). It has no exchange, and the archive keeps
 * nothing of it (the response is archived already).
 */
export function unrenderedPageEmit(page: RenderRequest, why: string, partitions: number): Emit {
  const { render_reason: reason, ...fetched } = page;
  const message: ArchivedExchange = { ...fetched, rendered: false, render_note: `not rendered (${reason}): ${why}` };
  return { subject: subjectFor('rendered', page.host, partitions), msgId: renderedMsgId(page.fetch_id), data: encodeExchange(message) };
}
