import { decodeAdmitted, type AdmittedUrl } from '../../schemas/index.js';
import { parseJsonValue } from '../../pipeline/kv-store.js';
import type { BackgroundTask, StageContext, StageDefinition } from '../../pipeline/stage.js';
import { asSlot, readyAt, TAIL_PREFIX, type HostSlot, type QueueTail } from '../host-slot.js';
import type { IpSlot } from '../ip-slot.js';
import { handleGateIntake } from './handle.js';
import { HostScheduler } from './host-scheduler.js';
import { gateEmits, gateInput, GATE_SCHEDULER_CONCURRENCY } from './spec.js';

/**
 * Runs the host scheduler, fed by a watch of the hosts bucket: every slot change (a URL
 * queued by any gate, a release by any fetcher, a lapsed lease) reaches every gate, which
 * is how gates share hosts without owning them and how a restarted gate finds its work.
 */
export async function startHostScheduler(ctx: StageContext, concurrency = GATE_SCHEDULER_CONCURRENCY): Promise<BackgroundTask & { scheduler: HostScheduler }> {
  const scheduler = new HostScheduler(ctx, concurrency);
  const watch = await ctx.kv.hosts.watch();
  const feed = (async () => {
    for await (const event of watch) {
      if (!event.value) continue;
      const now = ctx.clock.now();
      if (event.key.startsWith('_ip.')) {
        scheduler.ipFreed(parseJsonValue<IpSlot>(event.value).ip);
        continue;
      }
      if (event.key.startsWith(TAIL_PREFIX)) {
        // a URL was queued (by this gate or another)
        const tail = parseJsonValue<QueueTail>(event.value);
        scheduler.notify(tail.host);
        continue;
      }
      // the host's slot changed (a release, a lease, a pause): serve it when it is ready;
      // a turn finds out cheaply if it has nothing queued
      const raw = parseJsonValue<Partial<HostSlot>>(event.value);
      if (!raw.host) continue;
      const slot = asSlot(raw.host, raw);
      // (a live lease: at its end, in case its holder dies and never releases it)
      scheduler.notify(slot.host, readyAt(slot, now));
    }
  })().catch((err: Error) => ctx.log.error({ err: err.message }, 'watch of the hosts bucket ended'));
  scheduler.start();
  return {
    scheduler,
    async stop() {
      watch.stop();
      await scheduler.stop();
      await feed;
    },
  };
}

export const politenessGateStage: StageDefinition<AdmittedUrl> = {
  name: 'politeness-gate',
  input: gateInput,
  emits: gateEmits,
  defaultConcurrency: 64,
  decode: (_subject, data) => decodeAdmitted(data),
  handle: handleGateIntake,
  background: (ctx) => startHostScheduler(ctx),
};
