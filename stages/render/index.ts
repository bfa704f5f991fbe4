import { decodeRenderRequest, type RenderRequest } from '../../schemas/index.js';
import type { ConsumerStage } from '../../pipeline/stage.js';
import { createRenderHandler, type RenderStageDeps } from './handle.js';
import { renderEmits, renderInput } from './spec.js';

export { SubresourceCache } from './subresource-cache.js';

/** `--render-concurrency` unless given: a render keeps a core busy for a while, and the other stages need one too. */
export const DEFAULT_RENDER_CONCURRENCY = 2;

/** The render stage over a renderer (the app gives it Chromium's; its pool size is the stage's concurrency). */
export function createRenderStage(deps: RenderStageDeps & { concurrency?: number }): ConsumerStage<RenderRequest> {
  return {
    name: 'render',
    input: renderInput,
    emits: renderEmits,
    defaultConcurrency: deps.concurrency ?? DEFAULT_RENDER_CONCURRENCY,
    // crawler_render_renders_total{outcome: settled|timeout|<failure code>}, crawler_render_requests_total{outcome: fetched|cached|blocked}
    counts: ['renders', 'requests', 'bodies'],
    decode: (_subject, data) => decodeRenderRequest(data),
    handle: createRenderHandler(deps),
    close: () => deps.renderer.close(),
  };
}
