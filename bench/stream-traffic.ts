/**
 * What a crawl cost the message layer, read after the run: messages published to each stream
 * (its last sequence: every message ever stored, even those since removed) and the bytes it
 * holds; and KV operations, counted from the crawl's own `crawler_kv_operation_seconds`.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats } from '../pipeline/adapters/nats-connection.js';
import { seriesOf } from './metrics-text.js';

export interface StreamTraffic {
  /** over the pipeline's streams (not the KV buckets' streams) */
  messages: number;
  bytes: number;
  byStream: Record<string, { messages: number; bytes: number }>;
}

export async function streamTraffic(natsUrl: string): Promise<StreamTraffic> {
  const nc = await connectNats(natsUrl, 'bench-traffic');
  try {
    const jsm = await jetstreamManager(nc);
    const t: StreamTraffic = { messages: 0, bytes: 0, byStream: {} };
    for await (const info of jsm.streams.list()) {
      const name = info.config.name;
      if (name.startsWith('KV_')) continue;
      const entry = { messages: Number(info.state.last_seq), bytes: Number(info.state.bytes) };
      t.byStream[name] = entry;
      t.messages += entry.messages;
      t.bytes += entry.bytes;
    }
    return t;
  } finally {
    await nc.close();
  }
}

export interface KvOpCounts {
  reads: number;
  writes: number;
  byOp: Record<string, number>;
}

/**
 * Scrapes the crawl's /metrics once a second while it runs; `last` is the final scrape's
 * counts (the crawl is idle in its last second: `--until-idle` waits for that). `onGone` is
 * called once when the crawl stops answering after it had answered: its stages have
 * stopped (what follows is the merge of the output).
 */
export class KvOpsScraper {
  last: KvOpCounts = { reads: 0, writes: 0, byOp: {} };
  private readonly timer: NodeJS.Timeout;
  private answered = false;
  private ticks = 0;

  /**
   * Reads /metrics every second and /healthz every 250 ms in between: the crawl renders its
   * whole registry for /metrics (an allocation profile found 4 scrapes a second at 2 % of the
   * crawl's allocations), while the end of the crawl, when `onGone` reads the RSS before the
   * final merge, has to be seen within a fraction of a second.
   */
  constructor(
    private readonly port: number,
    private onGone?: () => void,
  ) {
    this.timer = setInterval(() => void this.scrape(this.ticks++ % 4 === 0), 250);
  }

  private async scrape(full: boolean): Promise<void> {
    try {
      const res = await fetch(`http://127.0.0.1:${this.port}/${full || !this.answered ? 'metrics' : 'healthz'}`);
      const ops = seriesOf(await res.text(), 'crawler_kv_operation_seconds_count');
      if (ops.length === 0) return; // /healthz, or /metrics before any KV operation
      const counts: KvOpCounts = { reads: 0, writes: 0, byOp: {} };
      for (const { labels, value } of ops) {
        const key = `${labels['bucket']} ${labels['op']}`;
        counts.byOp[key] = (counts.byOp[key] ?? 0) + value;
        if (labels['op'] === 'get') counts.reads += value;
        else counts.writes += value;
      }
      this.last = counts;
      this.answered = true;
    } catch {
      if (!this.answered) return; // not up yet
      const gone = this.onGone; // said once
      this.onGone = undefined;
      gone?.();
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** BENCH_WATCH=1: every 5 s, each consumer's backlog (not yet delivered / delivered, not acked): where the pipeline waits. */
export function watchBacklog(natsUrl: string): { stop(): Promise<void> } {
  let stopped = false;
  const done = (async () => {
    const nc = await connectNats(natsUrl, 'bench-watch');
    const jsm = await jetstreamManager(nc);
    try {
      while (!stopped) {
        await new Promise((r) => setTimeout(r, 5000));
        const parts: string[] = [];
        for await (const si of jsm.streams.list()) {
          if (si.config.name.startsWith('KV_')) continue;
          for await (const ci of jsm.consumers.list(si.config.name)) {
            if (ci.num_pending + ci.num_ack_pending > 0) parts.push(`${ci.name} ${ci.num_pending}/${ci.num_ack_pending}`);
          }
        }
        process.stdout.write(`  backlog: ${parts.join(', ') || 'none'}\n`);
      }
    } catch {
      /* the server went away with the run */
    } finally {
      await nc.close().catch(() => undefined);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
    },
  };
}
