import { edgesPublishedBy, stageInput } from '../../topology/index.js';

/**
 * render: pages extract chose to render in; their rendered DOM out on a subject of its own
 * (`crawl.fetched.rendered.<p>`, to extract again and to the archive), and the exchanges the
 * page's requests made (to the archive).
 */
export const renderInput = stageInput('render');
export const renderEmits = edgesPublishedBy('render');

/** After the load event a page counts as settled once no request has been open this long (the usual "network idle"). */
export const RENDER_SETTLE_MS = 500;
/** Renders of one page before it is stored as fetched, the failure in its note (a crash may be the browser's, not the page's). */
export const MAX_RENDER_ATTEMPTS = 3;
/** Requests one render may make; later ones are blocked (a page that loops over its own API). */
export const MAX_REQUESTS_PER_RENDER = 200;
/** Bytes one render's responses may add up to: they wait in memory with the DOM until the rendered page is published. */
export const MAX_BYTES_PER_RENDER = 16 * 1024 * 1024;
/** Lines of the render log kept in the archive's record of the DOM. */
export const MAX_RENDER_LOG_LINES = 100;
