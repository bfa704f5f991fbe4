import { jsonValue, parseJsonValue } from '../pipeline/kv-store.js';
import { parseSettings, type CrawlSettings } from '../pipeline/settings.js';
import type { KvStore } from '../ports/kv.js';

const SETTINGS_KEY = 'settings';

/** The settings the crawl was started with, as `crawl run` stored them; null if none yet. */
export async function readStoredSettings(kv: { config: KvStore }): Promise<CrawlSettings | null> {
  const entry = await kv.config.get(SETTINGS_KEY);
  return entry ? parseSettings(parseJsonValue(entry.value)) : null;
}

/** Stored in `crawl-config` so that every worker crawls with the same settings. */
export async function storeSettings(kv: { config: KvStore }, settings: CrawlSettings): Promise<void> {
  await kv.config.put(SETTINGS_KEY, jsonValue(settings));
}
