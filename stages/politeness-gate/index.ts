import { decodeAdmittedBatch, type AdmittedUrl } from '../../schemas/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseJsonValue } from '../../pipeline/kv-store.js';
import { type KvStore, type KvWatchEvent } from '../../ports/kv.js';
import type { BackgroundContext, BackgroundTask, ConsumerStage, StageContext } from '../../pipeline/stage.js';
import type { StreamAccess } from '../../ports/streams.js';
import type { CrawlSettings } from '../../pipeline/settings.js';
import type { HostWaitSources } from './host-waits.js';
import { robotsCacheFor } from '../shared/robots/robots-cache.js';
import { asSlot, leaseLive, readyAt, TAIL_PREFIX, type HostSlot, type QueueTail } from '../shared/host-state/host-slot.js';
import type { IpSlot } from '../shared/host-state/ip-slot.js';
import { handleGateIntake } from './handle.js';
import { HostScheduler } from './host-scheduler.js';
import { domainImportanceOf } from './domain-importance.js';
import { IMPORTANCE_PREFIX, type ImportanceNote } from '../shared/importance/domain-inlinks.js';
import { gateEmits, gateInput, GATE_SCHEDULER_CONCURRENCY } from './spec.js';

/**
 * Runs the host scheduler, fed by a watch of the hosts bucket: every slot change (a URL
 * queued by any gate, a release by any fetcher, a lapsed lease) reaches every gate, which
 * is how gates share hosts without owning them and how a restarted gate finds its work.
 */
export async function startHostScheduler(ctx: BackgroundContext, concurrency = GATE_SCHEDULER_CONCURRENCY): Promise<BackgroundTask & { scheduler: HostScheduler }> {
  const scheduler = new HostScheduler(ctx, concurrency);
  let stopping = false;
  let watch = await ctx.kv.hosts.watch();
  const feed = (async () => {
    // the watch is the scheduler's only news: if it ends (the server went away and the
    // watch could not resume), it is opened again; its replay of every key loses nothing
    for (;;) {
      try {
        for await (const event of watch) onHostEvent(ctx, scheduler, event);
      } catch (err) {
        ctx.log.warn({ err: (err as Error).message }, 'watch of the hosts bucket failed');
      }
      if (stopping) return;
      ctx.log.warn('watch of the hosts bucket ended; opening it again');
      await sleep(1000);
      if (stopping) return;
      try {
        watch = await ctx.kv.hosts.watch();
      } catch (err) {
        ctx.log.warn({ err: (err as Error).message }, 'reopening the watch of the hosts bucket failed; retrying');
      }
    }
  })();
  scheduler.start();
  return {
    scheduler,
    async stop() {
      stopping = true;
      watch.stop();
      await scheduler.stop();
      await feed;
    },
  };
}

function onHostEvent(ctx: StageContext, scheduler: HostScheduler, event: KvWatchEvent): void {
  if (!event.value) return;
  if (event.key.startsWith(IMPORTANCE_PREFIX)) {
    // a domain's in-link count grew (the seen-filters' importance estimate): ranks its hosts
    const note = parseJsonValue<ImportanceNote>(event.value);
    domainImportanceOf(ctx.kv.hosts).noteDomain(note.domain, note.inlinks);
    return;
  }
  if (event.key.startsWith('_ip.')) {
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
