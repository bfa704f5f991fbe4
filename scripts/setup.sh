#!/usr/bin/env bash
# Installs what the crawler needs on a fresh Debian/Ubuntu machine: nats-server and chromium
# (Debian's packages, when they are not there yet; firefox-esr for the tests) and the npm
# dependencies (which also builds).
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian's packages of what the crawler and its tests run: nats-server (the crawler's
# broker), chromium (the render stage drives it through playwright-core, which downloads no
# browser), firefox-esr (the browser tests open the console and the report in it too, through
# puppeteer-core, which downloads none either) and prometheus (the metrics tests scrape a crawl
# with it; promtool checks ops/)
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
missing=()
if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then missing+=(nats-server); fi
if [ ! -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ]; then missing+=(chromium); fi
if ! command -v prometheus >/dev/null 2>&1 && [ ! -x /usr/bin/prometheus ]; then missing+=(prometheus); fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]} from Debian's packages" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# firefox-esr only serves a test, and not every distribution packages it (Ubuntu has none):
# without it, setup goes on and that test is skipped with the reason
if [ ! -x "${FIREFOX_PATH:-/usr/bin/firefox-esr}" ]; then
  echo "setup: installing firefox-esr from Debian's packages" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends firefox-esr >/dev/null ||
    echo "setup: firefox-esr could not be installed; the Firefox browser test will be skipped" >&2
fi
# Debian installs it in /usr/sbin, which is not on every user's PATH
if ! command -v nats-server >/dev/null 2>&1; then export PATH="$PATH:/usr/sbin"; fi
echo "setup: $(nats-server --version)" >&2
# (Debian's wrapper script prints a shell warning on some machines: only the version line is kept)
echo "setup: $("${CHROMIUM_PATH:-/usr/bin/chromium}" --version 2>/dev/null | head -1)" >&2
if [ -x "${FIREFOX_PATH:-/usr/bin/firefox-esr}" ]; then echo "setup: $("${FIREFOX_PATH:-/usr/bin/firefox-esr}" --version 2>/dev/null | head -1)" >&2; fi
echo "setup: $(prometheus --version 2>&1 | head -1)" >&2

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm dependencies" >&2
  # npm install (not ci): it keeps the locked versions, and tolerates a lock file made on a
  # machine whose npm omits other platforms' optional packages (DuckDB's and msgpackr's)
  # (playwright-core and puppeteer-core never download a browser; the variables keep any
  # other package from it)
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1 npm install --no-audit --no-fund --loglevel=error
else
  npm run --silent build
fi
