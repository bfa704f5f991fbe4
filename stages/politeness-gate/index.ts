import { decodeAdmittedBatch, type AdmittedUrl } from '../../schemas/index.js';
import { parseJsonValue } from '../../pipeline/kv-store.js';
import { type KvStore, type KvWatchEvent } from '../../ports/kv.js';
import type { BackgroundContext, BackgroundTask, ConsumerStage, StageContext } from '../../pipeline/stage.js';
import type { StreamAccess } from '../../ports/streams.js';
import type { CrawlSettings } from '../../pipeline/settings.js';
import type { HostWaitSources } from './host-waits.js';
import { robotsCacheFor } from '../shared/robots/robots-cache.js';
import { asSlot, IP_KEY_PREFIX, leaseLive, readyAt, TAIL_PREFIX, type HostSlot, type IpSlot, type QueueTail } from '../shared/politeness/index.js';
import { handleGateIntake } from './handle.js';
import { HostScheduler } from './host-scheduler.js';
import { domainImportanceOf } from './domain-importance.js';
import type { ImportanceNote } from '../shared/importance/domain-inlinks.js';
import { followBucket } from './bucket-feed.js';
import { gateEmits, gateInput, GATE_SCHEDULER_CONCURRENCY } from './spec.js';

/**
 * Runs the host scheduler, fed by a watch of the hosts bucket: every slot change (a URL
 * queued by any gate, a release by any fetcher, a lapsed lease) reaches every gate, which
 * is how gates share hosts without owning them and how a restarted gate finds its work.
 * When it ranks by importance, also by a watch of the importance bucket: the seen-filters'
 * in-link counts of the hosts' domains.
 */
export async function startHostScheduler(ctx: BackgroundContext, concurrency = GATE_SCHEDULER_CONCURRENCY): Promise<BackgroundTask & { scheduler: HostScheduler }> {
  const scheduler = new HostScheduler(ctx, concurrency);
  const feeds = [await followBucket(ctx, ctx.kv.hosts, 'hosts', (event) => onHostEvent(ctx, scheduler, event))];
  // optional: without it a gate ranks by the counts stamped on the URLs it queues
  if (ctx.settings.importance) feeds.push(await followBucket(ctx, ctx.kv.importance, 'importance', (event) => onImportanceEvent(ctx, event), { optional: true }));
  scheduler.start();
  return {
    scheduler,
    async stop() {
      const fed = feeds.map((feed) => feed.stop());
      await scheduler.stop();
      await Promise.all(fed);
    },
  };
}

/** A domain's in-link count grew (the seen-filters' importance estimate): ranks its hosts. */
function onImportanceEvent(ctx: StageContext, event: KvWatchEvent): void {
  if (!event.value) return;
  const note = parseJsonValue<ImportanceNote>(event.value);
  domainImportanceOf(ctx.kv.importance).noteDomain(note.domain, note.inlinks);
}

function onHostEvent(ctx: StageContext, scheduler: HostScheduler, event: KvWatchEvent): void {
  if (!event.value) return;
  if (event.key.startsWith(IP_KEY_PREFIX)) {
    scheduler.ipFreed(parseJsonValue<IpSlot>(event.value).ip);
    return;
  }
  if (event.key.startsWith(TAIL_PREFIX)) {
    // a URL was queued (by this gate or another)
    scheduler.queued(parseJsonValue<QueueTail>(event.value).host);
    return;
  }
  // the host's slot changed (a release, a lease, a pause): serve it when it is ready; a turn
  // finds out cheaply if it has nothing queued (a live lease: at its end, in case its holder
  // dies and never releases it). A paused host gets a turn now: its queued URLs that already
  // failed end without waiting for the pause (failing-host.ts), all of them once it is given up
  const raw = parseJsonValue<Partial<HostSlot>>(event.value);
  if (!raw.host) return;
  const slot = asSlot(raw.host, raw);
  const now = ctx.clock.now();
  scheduler.notify(raw.host, slot.paused_until > now && !leaseLive(slot, now) ? now : readyAt(slot, now));
}

export const politenessGateStage: ConsumerStage<AdmittedUrl[]> = {
  name: 'politeness-gate',
  input: gateInput,
  emits: gateEmits,
  defaultConcurrency: 64,
  counts: ['urls', 'robots_fetches', 'turns', 'hostq_removed'],
  // a message holds one admitted URL (a fetch's retry) or the seen-filter's batch (schemas/url-batches.ts)
  decode: (_subject, data) => decodeAdmittedBatch(data),
  handle: handleGateIntake,
  background: (ctx) => startHostScheduler(ctx),
};

export { listHostWaits, countBusyHosts, summarizeWaits, formatWaitSummary, formatDuration, type HostWait, type WaitReason, type WaitSummary, type HostWaitSources } from './host-waits.js';

/** What `listHostWaits` reads, built from a process's buckets and settings (no stage context needed). */
export function hostWaitSources(kv: { hosts: KvStore; robots: KvStore }, streams: Pick<StreamAccess, 'readNext'>, settings: CrawlSettings): HostWaitSources {
  return {
    hosts: kv.hosts,
    robots: robotsCacheFor(kv.robots, settings),
    streams,
    partitions: settings.partitions,
    robotsGiveUpMs: settings.robotsGiveUpMs,
  };
}
