import { edgesPublishedBy, stageInput } from '../../topology/index.js';

/** fetch: grants in; fetched HTML pages, redirect targets and failure outcomes out. */
export const fetchInput = stageInput('fetch');
export const fetchEmits = edgesPublishedBy('fetch');
