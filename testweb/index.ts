// Public surface of the local test web (see DESIGN.md, "The local test web").

export { startTestWeb } from './server.js';
export type { StartTestWebOptions, TestWeb, RequestRecord } from './server.js';
export { buildSiteModel, siteHostName, benchHostName, languageForHost, DEFAULT_PAGES_PER_HOST, DEFAULT_BENCH_PAGES_PER_HOST } from './site-model.js';
export { expectedPages, expectedCrawl } from './expected-pages.js';
export type { ExpectedPagesOptions, ExpectedCrawl, ExpectedPage } from './expected-pages.js';
export { renderPage, SCRIPT_MARKER, STYLE_MARKER, COMMENT_MARKER } from './render-page.js';
export { robotsAllows, robotsCrawlDelay, robotsKindForHost, ROBOTS_CYCLE, SPECIAL_AGENT_TOKEN } from './robots-rules.js';
export type { RobotsKind, RobotsSpec, RobotsGroup, RobotsRule } from './robots-rules.js';
export { canonicalUrl, isTrackingParam, resolveLink } from './url-forms.js';
export { getFromTestWeb } from './http-get.js';
export type { TestWebResponse } from './http-get.js';
export { runTestWebCli } from './main.js';
export type { TestWebCliArgs } from './main.js';
export type {
  SiteModel,
  HostModel,
  Resource,
  HtmlResource,
  RedirectResource,
  PageLink,
  PageRole,
  LinkArea,
  BuildSiteModelOptions,
} from './model-types.js';
