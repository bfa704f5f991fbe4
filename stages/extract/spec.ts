import { edgesPublishedBy, stageInput } from '../../topology/index.js';

/** extract: fetched pages in; extracted pages (to simhash), discovered links (to normalize) and pages to render out. */
export const extractInput = stageInput('extract');
export const extractEmits = edgesPublishedBy('extract');
