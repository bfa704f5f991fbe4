/**
 * What a crawl's seeds reach: their registrable domains (the default), their exact hosts, their
 * origin and directory (`prefix`), or any host (`open`, bounded by depth, budgets, patterns and
 * the SSRF guard). The same modes for `crawl run --scope`, the deployment's settings and jobs;
 * stages/normalize/scope.ts applies them.
 */
export const SCOPE_MODES = ['domain', 'host', 'prefix', 'open'] as const;
export type ScopeMode = (typeof SCOPE_MODES)[number];
