/**
 * The crawl's admitted count against --max-pages (crawl-seen bucket): the seen-filter adds each
 * URL it admits; a URL the first pass held is added when the gate grants it (first-pass.ts).
 */
export const admittedCountKey = (crawlId: string) => `admitted-count.${crawlId}`;
