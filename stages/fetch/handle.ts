import {
  encodeAdmitted,
  encodeDiscoveredLinks,
  encodeFetched,
  type FetchGrant,
  type OutcomeKind,
} from '../../schemas/index.js';
import { HttpFetchError, type HttpResponse } from '../../pipeline/adapters/http-client.js';
import { subjectFor } from '../../pipeline/partition.js';
import { emit, type Emit, type Outcome, type StageContext, type StageInput } from '../../pipeline/stage.js';
import { confirmLease, releaseSlot } from '../host-slot.js';
import { stableId } from '../stage-ids.js';
import { outcomeEmit } from '../outcome-emit.js';
import { classifyResponse } from './classify-response.js';
import { MESSAGE_OVERHEAD_BYTES } from './spec.js';

function fetchOutcome(
  ctx: StageContext,
  g: FetchGrant,
  outcome: OutcomeKind,
  reason: string,
  status: number | null,
  fetchTime: number,
  durationMs: number | null,
): Emit {
  return outcomeEmit(ctx, `outcome:${g.fetch_id}:${outcome}`, {
    event_id: stableId(outcome, g.fetch_id),
    fetch_id: g.fetch_id,
    url: g.url,
    host: g.host,
    outcome,
    reason,
    fetch_status: status,
    fetch_time: fetchTime,
    duration_ms: durationMs,
    depth: g.depth,
  });
}

/**
 * A grant whose lease lapsed (it waited too long in the stream, or another process took
 * the host over) must not fetch: it goes back to the gate, which grants it again.
 */
function backToGate(ctx: StageContext, g: FetchGrant): Outcome {
  const { lease_id: _lease, granted_at: _granted, delay_ms: _delay, ...admitted } = g;
  ctx.metrics.count('fetch', 'grants', 'stale');
  return emit({
    subject: subjectFor('frontier', g.host, ctx.settings.partitions),
    msgId: `regrant:${g.fetch_id}:${g.lease_id}`,
    data: encodeAdmitted(admitted),
  });
}

function responseEmits(ctx: StageContext, g: FetchGrant, res: HttpResponse, start: number, durationMs: number): Emit[] {
  const verdict = classifyResponse(res, g.url);
  switch (verdict.kind) {
    case 'redirect':
      return [
        fetchOutcome(ctx, g, 'redirect', `redirect to ${verdict.location}`, res.status, start, durationMs),
        {
          subject: subjectFor('links', g.host, ctx.settings.partitions),
          msgId: `redirect:${g.fetch_id}`,
          // a redirect is the same resource at another address: its target keeps the depth
          data: encodeDiscoveredLinks({ v: 1, source_url: g.url, depth: g.depth, via: 'redirect', links: [{ url: verdict.location }] }),
        },
      ];
    case 'http_error':
      return [fetchOutcome(ctx, g, 'http_error', verdict.reason, res.status, start, durationMs)];
    case 'unsupported_content':
      return [fetchOutcome(ctx, g, 'unsupported_content', verdict.reason, res.status, start, durationMs)];
    case 'html':
      return [
        {
          subject: subjectFor('fetched', g.host, ctx.settings.partitions),
          msgId: `fetched:${g.fetch_id}`,
          data: encodeFetched({
            v: 1,
            fetch_id: g.fetch_id,
            url: g.url,
            host: g.host,
            domain: g.domain,
            depth: g.depth,
            fetch_time: start,
            fetch_status: res.status,
            duration_ms: durationMs,
            content_type: verdict.mimeType,
            charset: verdict.charset,
            headers: res.headers,
            body: res.body,
            truncated: res.truncated,
          }),
        },
      ];
  }
}

export async function handleFetch(input: StageInput<FetchGrant>, ctx: StageContext): Promise<Outcome> {
  const g = input.message;
  const s = ctx.settings;
  const leaseMs = s.totalTimeoutMs + 10_000;
  const lease = await confirmLease(ctx.kv.hosts, g.host, g.lease_id, ctx.clock.now(), leaseMs);
  if (lease === 'done') {
    // redelivered after its request completed (the ack was lost): its outputs are already out
    ctx.metrics.count('fetch', 'grants', 'already_done');
    return emit();
  }
  if (lease === 'lost') return backToGate(ctx, g);
  const start = ctx.clock.now();
  let out: Emit[];
  try {
    const res = await ctx.http.request({
      url: g.url,
      headers: { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5' },
      connectTimeoutMs: s.connectTimeoutMs,
      headersTimeoutMs: s.headersTimeoutMs,
      totalTimeoutMs: s.totalTimeoutMs,
      // the body travels in one message: it must fit the server's max_payload
      maxBodyBytes: Math.max(1024, Math.min(s.maxBodyBytes, ctx.maxPayloadBytes - MESSAGE_OVERHEAD_BYTES)),
    });
    const durationMs = Math.round(ctx.clock.now() - start);
    out = responseEmits(ctx, g, res, start, durationMs);
    ctx.metrics.count('fetch', 'responses', String(res.status));
  } catch (err) {
    if (!(err instanceof HttpFetchError)) {
      await releaseSlot(ctx.kv.hosts, g.host, g.lease_id, ctx.clock.now(), g.delay_ms, Math.round(ctx.clock.now() - start));
      throw err;
    }
    const durationMs = Math.round(ctx.clock.now() - start);
    out = [fetchOutcome(ctx, g, 'network_error', `${err.code}: ${err.message}`, null, start, durationMs)];
    ctx.metrics.count('fetch', 'responses', `error_${err.code}`);
  }
  const end = ctx.clock.now();
  // the host is released only once the outputs are published: a grant redelivered after that
  // is recognised as done, and one redelivered before it still holds the lease and fetches again
  return {
    kind: 'emit',
    messages: out,
    afterPublish: () => releaseSlot(ctx.kv.hosts, g.host, g.lease_id, end, g.delay_ms, Math.round(end - start)),
  };
}
