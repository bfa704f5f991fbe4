import type { Emit } from '../../pipeline/stage.js';
import type { RenderRouting } from './render-route.js';

/**
 * Everything extracting a page depends on besides the page: plain data, so that the work
 * can run in a worker thread (stages/extract/extract-worker.ts) as well as inline.
 */
export interface ExtractSettings {
  /** false drops titles (the replay test's deliberate bug) */
  titles: boolean;
  /** the largest message the server accepts */
  maxPayloadBytes: number;
  partitions: number;
  maxDepth: number;
  /** false: links are recorded in the output, not sent to normalize (`--no-follow-links`) */
  followLinks: boolean;
  /** which pages go to the render stage instead (`--render`, `--render-auto`) */
  render: RenderRouting;
  /** the crawler's robots token: meta robots named by it and X-Robots-Tag rules addressed to it apply */
  robotsToken: string;
}

/** A metric count to add on the main thread: `extract/<what>{outcome}` by `by`. */
export interface ExtractCount {
  what: string;
  outcome: string;
  by: number;
}

/** What extracting one fetched page gives: messages to publish, counts, and the validators to keep once they are out. */
export interface PageExtraction {
  messages: Emit[];
  counts: ExtractCount[];
  /**
   * null for a crawl job's page (its revisit carries its validators instead of a KV entry per
   * URL) and for a page sent to be rendered (its rendered version keeps them)
   */
  validators: { url: string; headers: Record<string, string>; fetchTime: number; links: string[]; fetchId: string } | null;
}
