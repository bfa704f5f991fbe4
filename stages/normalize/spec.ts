import { edgesPublishedBy, stageInput } from '../../topology/index.js';

/** normalize: seeds and discovered links in; canonical in-scope candidates and filtered outcomes out. */
export const normalizeInput = stageInput('normalize');
export const normalizeEmits = edgesPublishedBy('normalize');
