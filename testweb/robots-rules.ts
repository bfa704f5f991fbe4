// robots.txt of the test web: which kind of file each host gets, its text, and a small
// RFC 9309 matcher over the same rules. The text is what the server sends; the structured
// rules are what expectedPages() evaluates. A unit test checks that both agree (by parsing
// the text with robots-parser), so the expectation can never drift from what is served.

/** The kinds of robots.txt in the test web; see ROBOTS_CYCLE for which host gets which. */
export type RobotsKind =
  | 'open' //          User-agent: * with an empty Disallow: everything allowed
  | 'private' //       User-agent: * / Disallow: /private/
  | 'private-allow' // as 'private', plus Allow: /private/press/ (longest match wins)
  | 'delay-1' //       Crawl-delay: 1 and Disallow: /private/
  | 'delay-2' //       Crawl-delay: 2 and Disallow: /private/
  | 'agent' //         a testcrawler group (Disallow /nocrawl/ and /private/) + a * group (Disallow /private/)
  | 'agent-only' //    a testcrawler group (Disallow /nocrawl/ only) + * allows all: the specific group
  //                   REPLACES the * group (RFC 9309), so testcrawler may fetch /private/ here
  | 'none' //          no robots.txt at all: 404, which means everything is allowed
  | 'bench'; //        bench hosts: User-agent: * / Allow: /

/** The agent token that some hosts single out with their own group. */
export const SPECIAL_AGENT_TOKEN = 'testcrawler';

/**
 * Robots kind by host index modulo 20. Hosts 0..5 hold one of every kind (so any test web
 * with >= 6 hosts has them all); crawl delays sit on 3 hosts in 20 and never exceed 2 s,
 * so a 20-host crawl still finishes quickly.
 */
export const ROBOTS_CYCLE: readonly RobotsKind[] = Object.freeze([
  'private', 'agent', 'delay-1', 'none', 'open', //            0..4
  'agent-only', 'private-allow', 'open', 'agent', 'delay-2', // 5..9
  'private', 'open', 'agent-only', 'private-allow', 'open', // 10..14
  'private', 'delay-1', 'agent', 'open', 'private-allow', //  15..19
]);

export function robotsKindForHost(index: number): RobotsKind {
  return ROBOTS_CYCLE[index % ROBOTS_CYCLE.length] as RobotsKind;
}

export interface RobotsRule {
  allow: boolean;
  /** Plain path prefix (the test web uses no wildcards). Empty matches nothing. */
  path: string;
}

export interface RobotsGroup {
  /** Lower-case product tokens, or '*'. */
  userAgents: string[];
  rules: RobotsRule[];
  crawlDelay?: number;
}

export interface RobotsSpec {
  kind: RobotsKind;
  /** HTTP status of /robots.txt: 200, or 404 when the host has none. */
  status: 200 | 404;
  /** Body served with status 200; null for 404. */
  text: string | null;
  groups: RobotsGroup[];
  /** Crawl-delay (seconds) of the '*' group, if any. */
  crawlDelay?: number;
}

const disallow = (path: string): RobotsRule => ({ allow: false, path });
const allow = (path: string): RobotsRule => ({ allow: true, path });

function groupsForKind(kind: RobotsKind): RobotsGroup[] {
  switch (kind) {
    case 'open':
      return [{ userAgents: ['*'], rules: [disallow('')] }];
    case 'private':
      return [{ userAgents: ['*'], rules: [disallow('/private/')] }];
    case 'private-allow':
      return [{ userAgents: ['*'], rules: [disallow('/private/'), allow('/private/press/')] }];
    case 'delay-1':
      return [{ userAgents: ['*'], rules: [disallow('/private/')], crawlDelay: 1 }];
    case 'delay-2':
      return [{ userAgents: ['*'], rules: [disallow('/private/')], crawlDelay: 2 }];
    case 'agent':
      return [
        { userAgents: [SPECIAL_AGENT_TOKEN], rules: [disallow('/nocrawl/'), disallow('/private/')] },
        { userAgents: ['*'], rules: [disallow('/private/')] },
      ];
    case 'agent-only':
      return [
        { userAgents: ['badbot'], rules: [disallow('/')] },
        { userAgents: ['otherbot', SPECIAL_AGENT_TOKEN], rules: [disallow('/nocrawl/')] },
        { userAgents: ['*'], rules: [allow('/')] },
      ];
    case 'bench':
      return [{ userAgents: ['*'], rules: [allow('/')] }];
    case 'none':
      return [];
  }
}

/** Renders the groups as robots.txt text, with the comments and blank lines real files have. */
function renderRobotsText(host: string, groups: RobotsGroup[], kind: RobotsKind): string {
  if (kind === 'bench') return 'User-agent: *\nAllow: /\n';
  const lines: string[] = [`# robots.txt for ${host}`];
  for (const group of groups) {
    lines.push('');
    for (const ua of group.userAgents) lines.push(`User-agent: ${ua === SPECIAL_AGENT_TOKEN ? 'TestCrawler' : ua}`);
    if (group.crawlDelay !== undefined) lines.push(`Crawl-delay: ${group.crawlDelay}`);
    for (const rule of group.rules) {
      lines.push(`${rule.allow ? 'Allow' : 'Disallow'}: ${rule.path}${rule.path === '/private/' ? ' # staff only' : ''}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export function buildRobotsSpec(host: string, kind: RobotsKind): RobotsSpec {
  const groups = groupsForKind(kind);
  if (kind === 'none') return { kind, status: 404, text: null, groups };
  const star = groups.find((g) => g.userAgents.includes('*'));
  const spec: RobotsSpec = { kind, status: 200, text: renderRobotsText(host, groups, kind), groups };
  if (star?.crawlDelay !== undefined) spec.crawlDelay = star.crawlDelay;
  return spec;
}

/** The groups that apply to an agent token: its own groups if any name it, else the '*' groups. */
function applicableGroups(spec: RobotsSpec, userAgentToken: string): RobotsGroup[] {
  const token = userAgentToken.toLowerCase();
  const own = spec.groups.filter((g) => g.userAgents.includes(token));
  return own.length > 0 ? own : spec.groups.filter((g) => g.userAgents.includes('*'));
}

/**
 * RFC 9309 verdict for a path (+query) on a host: the longest matching rule wins, Allow wins
 * a tie, no matching rule (or no robots.txt) means allowed. /robots.txt itself is always allowed.
 */
export function robotsAllows(spec: RobotsSpec, userAgentToken: string, pathAndQuery: string): boolean {
  if (spec.status !== 200 || pathAndQuery === '/robots.txt') return true;
  let best: RobotsRule | undefined;
  for (const group of applicableGroups(spec, userAgentToken)) {
    for (const rule of group.rules) {
      if (rule.path === '' || !pathAndQuery.startsWith(rule.path)) continue;
      if (!best || rule.path.length > best.path.length || (rule.path.length === best.path.length && rule.allow)) best = rule;
    }
  }
  return best ? best.allow : true;
}

/** Crawl-delay (seconds) that applies to an agent token, if any. */
export function robotsCrawlDelay(spec: RobotsSpec, userAgentToken: string): number | undefined {
  for (const group of applicableGroups(spec, userAgentToken)) {
    if (group.crawlDelay !== undefined) return group.crawlDelay;
  }
  return undefined;
}
