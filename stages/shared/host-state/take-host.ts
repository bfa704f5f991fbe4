import type { StageContext } from '../../../pipeline/stage.js';
import { acquireSlot, type AcquireOptions } from './host-slot.js';
import { acquireIp, releaseIp } from './ip-slot.js';

export type Taken =
  | { taken: true; ip: string | null }
  | { taken: false; retryAt: number; reason: string; ip?: string };

/**
 * Takes what one request needs before it may start: a place on the host's IP (when the
 * per-IP cap is on) and the host's lease. Either both or neither: a host that is busy gives
 * its IP place back. `ip` on a wait says the IP was full, so its release wakes the host.
 */
export async function takeHost(ctx: StageContext, host: string, now: number, opts: AcquireOptions): Promise<Taken> {
  const ip = ctx.settings.maxPerIp > 0 ? await ctx.resolveHost(host) : null;
  if (ip) {
    const place = await acquireIp(ctx.kv.hosts, ip, now, opts.leaseId, now + opts.leaseMs, ctx.settings.maxPerIp);
    if (!place.acquired) return { taken: false, retryAt: place.retryAt, reason: 'IP full', ip };
  }
  const got = await acquireSlot(ctx.kv.hosts, host, now, opts);
  if (!got.acquired) {
    if (ip) await releaseIp(ctx.kv.hosts, ip, opts.leaseId, now);
    return { taken: false, retryAt: got.retryAt, reason: got.reason };
  }
  return { taken: true, ip };
}
