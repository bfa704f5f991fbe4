#!/usr/bin/env bash
# Installs what the crawler needs on a fresh Debian/Ubuntu machine: nats-server (Debian's
# package, when it is not already on PATH) and the npm dependencies (which also builds).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then
  echo "setup: installing nats-server from Debian's package" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nats-server >/dev/null
fi
# Debian installs it in /usr/sbin, which is not on every user's PATH
if ! command -v nats-server >/dev/null 2>&1; then export PATH="$PATH:/usr/sbin"; fi
echo "setup: $(nats-server --version)" >&2

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm dependencies" >&2
  # npm install (not ci): it keeps the locked versions, and tolerates a lock file made on a
  # machine whose npm omits other platforms' optional packages (DuckDB's and msgpackr's)
  npm install --no-audit --no-fund --loglevel=error
else
  npm run --silent build
fi
