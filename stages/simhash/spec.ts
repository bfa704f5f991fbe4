import { edgesPublishedBy, stageInput } from '../../topology/index.js';

/** simhash: extracted pages in; pages with their fingerprint and near-duplicate verdict out. */
export const simhashInput = stageInput('simhash');
export const simhashEmits = edgesPublishedBy('simhash');

/** Entries kept per index key; past it the oldest go (bounded growth for hot keys). */
export const MAX_ENTRIES_PER_KEY = 256;
