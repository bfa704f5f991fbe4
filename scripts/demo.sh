#!/usr/bin/env bash
# A real crawl of the built-in test web on this machine: 24 hosts on 127.0.0.1, polite
# delays on, until every URL has an outcome. Prints where the output is and a query to try.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PATH:/usr/sbin"

OUT="${OUT:-demo-output}"
HOSTS="${HOSTS:-24}"
PORT_FILE=$(mktemp)
dist/cli/main.js testweb --hosts "$HOSTS" --port 0 >"$PORT_FILE" &
TESTWEB=$!
trap 'kill $TESTWEB 2>/dev/null || true; rm -f "$PORT_FILE"' EXIT
for _ in $(seq 1 100); do grep -q listening "$PORT_FILE" && break; sleep 0.1; done
PORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$PORT_FILE" | head -1)
echo "demo: test web on 127.0.0.1:$PORT with $HOSTS hosts; crawling into $OUT/" >&2

SEEDS=()
for i in $(seq 0 $((HOSTS - 1))); do SEEDS+=(--seed "http://h$(printf '%02d' "$i").site.test/"); done
dist/cli/main.js run "${SEEDS[@]}" --out "$OUT" --resolve "*.site.test=127.0.0.1:$PORT" \
  --max-depth 3 --until-idle

dist/cli/main.js sql --out "$OUT" \
  "SELECT url_host_name, count(*) AS pages, round(avg(content_length)) AS avg_bytes FROM pages GROUP BY 1 ORDER BY 1 LIMIT 30"
dist/cli/main.js sql --out "$OUT" "SELECT outcome, count(*) AS n FROM fetch_log GROUP BY 1 ORDER BY 2 DESC"
