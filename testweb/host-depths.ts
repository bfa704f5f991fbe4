// depthFromHostRoot of every resource: how many link hops from the host's "/" it takes,
// the number tests use to pick a crawl depth that covers a host.

import { resolveLink } from './url-forms.js';
import type { HostModel, Resource } from './model-types.js';

/**
 * BFS over same-host links from "/": links of meta-robots nofollow pages are not followed,
 * a redirect is one hop to its target, robots.txt is ignored (it depends on the agent).
 * Unreached resources keep null.
 */
export function computeHostDepths(host: HostModel): void {
  const root = host.resources.get('/');
  if (!root) return;
  root.depthFromHostRoot = 0;
  const queue: Resource[] = [root];
  for (let qi = 0; qi < queue.length; qi++) {
    const res = queue[qi] as Resource;
    const depth = res.depthFromHostRoot as number;
    const url = `http://${host.name}${res.path}`;
    const next: Array<string | null> =
      res.kind === 'redirect' ? [resolveLink(url, undefined, res.location)]
      : res.metaRobots === 'nofollow' ? []
      : res.links.map((l) => resolveLink(url, res.baseHref, l.href));
    for (const target of next) {
      if (!target) continue;
      const u = new URL(target);
      if (u.hostname !== host.name) continue;
      const t = host.resources.get(`${u.pathname}${u.search}`);
      if (t && t.depthFromHostRoot === null) {
        t.depthFromHostRoot = depth + 1;
        queue.push(t);
      }
    }
  }
}
