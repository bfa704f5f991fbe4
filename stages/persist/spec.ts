import { edgesPublishedBy, stageInput } from '../../topology/index.js';

/** persist: pages and outcomes in; Parquet files out. Nothing is emitted to streams. */
export const persistInput = stageInput('persist');
export const persistEmits = edgesPublishedBy('persist');
