/**
 * `urls`: one row per URL of each crawl (crawl_id, url), the URL's state as the crawl knows it,
 * from `fetch_log` (each event once, the newest version after replays) and `pages` (the newest
 * stored copy). docs/output-and-queries.md documents the columns and the status rules.
 *
 * Two rows of a URL's history matter besides the counts:
 * - the newest row (by fetch_time; at the same time a terminal row before a `retry`): what
 *   `last_outcome` and `last_reason` show;
 * - the deciding row: the newest that is neither `filtered` nor `retry`, else the newest
 *   `retry`, else the newest `filtered`. It sets `status` and the schedule. A `filtered` row
 *   says what the crawl did with one more link to the URL (past the depth limit, over a
 *   budget), not what the URL is, so it decides only for a URL that has nothing else; a
 *   `retry` says a request is still to be made, so the last finished one decides.
 *
 * One aggregation over fetch_log: each of the two rows is an arg_max over a key that orders
 * the rows as said (the key ends with event_id, so ties are broken the same way every time).
 */

/** Outcomes of a request made for the URL (its status is the answer's), as `fetches` counts them: the rows with a duration. */
const MADE_A_REQUEST = 'duration_ms IS NOT NULL';

export const URLS_VIEW = `
WITH f AS (
  SELECT crawl_id, url,
         any_value(url_host_name) AS url_host_name,
         min(fetch_time) AS first_seen,
         max(fetch_time) FILTER (WHERE ${MADE_A_REQUEST}) AS last_fetched,
         count(*) FILTER (WHERE ${MADE_A_REQUEST}) AS fetches,
         arg_max({'outcome': outcome, 'reason': reason}, (fetch_time, outcome <> 'retry', event_id)) AS newest,
         arg_max({'outcome': outcome, 'fetch_status': fetch_status, 'next_due_at': next_due_at, 'change_rate': change_rate},
                 (outcome <> 'filtered', outcome <> 'retry', fetch_time, event_id)) AS deciding
  FROM fetch_log GROUP BY crawl_id, url
)
SELECT f.crawl_id, f.url, f.url_host_name, f.first_seen, f.last_fetched,
       f.newest.outcome AS last_outcome, f.newest.reason AS last_reason,
       CASE
         WHEN f.deciding.outcome = 'redirect' THEN 'redirect'
         WHEN f.deciding.outcome = 'robots_disallowed' THEN 'blocked_by_robots'
         WHEN f.deciding.outcome IN ('filtered', 'refused') THEN 'filtered'
         WHEN f.deciding.outcome = 'network_error' THEN 'dead'
         -- 429 and 5xx end a URL only once its retries are spent
         WHEN f.deciding.outcome = 'http_error' AND (f.deciding.fetch_status IN (404, 410, 429) OR f.deciding.fetch_status >= 500) THEN 'dead'
         ELSE 'active'
       END AS status,
       f.deciding.next_due_at AS next_due_at,
       f.deciding.change_rate AS change_rate,
       p.content_digest,
       f.fetches
FROM f LEFT JOIN pages p ON p.crawl_id = f.crawl_id AND p.url = f.url`;
