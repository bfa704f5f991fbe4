import { edgesPublishedBy, stageInput } from '../../topology/index.js';

/** archive: every HTTP exchange in (pages on crawl.fetched, the rest on crawl.exchanges); WARC files and `captures` rows out. */
export const archiveInput = stageInput('archive');
export const archiveEmits = edgesPublishedBy('archive');
