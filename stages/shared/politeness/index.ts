/**
 * Politeness: at most one request in flight per host (and a cap per address), and a gap
 * between a host's requests of at least its delay, whatever the number of gate, fetch and
 * render processes. A stage takes part through a host's turn (host-turn.ts: take, confirm,
 * release with what the answer said); the gate also reads the host's slot and queues to
 * decide whom to serve. The state is per-host KV entries in `crawl-hosts` (host-slot.ts,
 * ip-slot.ts), paced by host-pacing.ts from answers judged by failure-policy.ts; a host's
 * queued URLs wait in lanes (host-lanes.ts) on the host-queue stream (served-urls.ts).
 *
 * This file is the module's only public face: code outside it imports from here.
 */
export { takeTurn, confirmTurn, keepTurn, HELD_LEASE_MS, releaseTurn, giveBackTurn, previewRelease, pacedFrom, type HostLease, type KeptTurn, type Taken, type TurnAnswer } from './host-turn.js';
export {
  asSlot,
  effectiveCursor,
  lanesWithWork,
  leaseLive,
  noteQueued,
  readSlot,
  readTail,
  readyAt,
  skipQueued,
  TAIL_PREFIX,
  type HostSlot,
  type LeaseCheck,
  type QueueTail,
} from './host-slot.js';
export { IP_KEY_PREFIX, type IpSlot } from './ip-slot.js';
export { PACING_GUARD_MS, PAUSES_BEFORE_GIVING_UP, type FetchFeedback, type Pacing } from './host-pacing.js';
export { judgeFetch, feedbackForStatus, hostDead, refusedEverywhere, REFUSED_RECHECK_MS } from './failure-policy.js';
export { laneJob, laneLevel, laneOf, laneWeight, nextLane, type LaneLevel } from './host-lanes.js';
export { removeServed } from './served-urls.js';
