import { chromiumMissing } from '../pipeline/adapters/browser/chromium-launch.js';
import type { CrawlSettings } from '../pipeline/settings.js';
import { UsageError } from './usage-error.js';

/** Stops start-up with one line when the render stage would need a browser this machine lacks. */
export function requireBrowser(): void {
  const missing = chromiumMissing();
  if (missing) throw new UsageError(missing);
}

/** The settings, once it is clear that a crawl that renders (`--render`, `--render-auto`) has its browser. */
export function requireBrowserIfRendering(settings: CrawlSettings): CrawlSettings {
  if (settings.render.length > 0 || settings.renderAuto) requireBrowser();
  return settings;
}
