#!/usr/bin/env bash
# Installs the real implementations the verify module runs retrykit's profile
# vectors through: Debian's python3-celery, python3-botocore, ruby-sidekiq,
# ruby-activejob, python3-tenacity, python3-backoff, python3-rq and
# ruby-delayed-job, node and npm (Debian's nodejs, unless a node is already
# installed), redis-server (for asynq's own server), PostgreSQL (Debian's
# postgresql, for River's, pg-boss's and graphile-worker's own code; the tests
# start a throwaway cluster with its initdb and pg_ctl), and the bullmq, p-retry,
# exponential-backoff, bee-queue, pg-boss and graphile-worker npm packages pinned
# by verify/node/package-lock.json.
# The Go libraries come from the module proxy with `go test`.
#
# Idempotent: Debian packages already installed are not reinstalled, and
# verify/node/node_modules is rebuilt from the lock file. Needs root
# (or sudo) only when a Debian package is missing.
set -euo pipefail
cd "$(dirname "$0")"

missing=()
for pkg in python3-celery python3-botocore ruby-sidekiq ruby-activejob python3-tenacity python3-backoff python3-rq ruby-delayed-job; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
command -v node >/dev/null 2>&1 || missing+=(nodejs)
# asynq's own server archives a task on a real Redis (TestAsynqExhaustion).
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v npm >/dev/null 2>&1 || missing+=(npm)
# River's and pg-boss's tests run initdb and pg_ctl: on PATH, or where
# Debian's postgresql package puts them.
if ! command -v initdb >/dev/null 2>&1 && ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
  missing+=(postgresql)
fi

if [ "${#missing[@]}" -gt 0 ]; then
  echo "verify/install.sh: apt-get install ${missing[*]}"
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# npm ci installs exactly the lock file. It refuses to run when the registry
# cannot resolve every optional platform package the lock names (the npm
# registry reachable here lacks msgpackr-extract's darwin and win32 builds at
# the locked version); npm install with the same lock file then installs the
# same locked versions for this platform, without rewriting the lock.
echo "verify/install.sh: npm ci in verify/node"
if ! (cd node && npm ci --ignore-scripts --no-audit --no-fund --loglevel=silent); then
  echo "verify/install.sh: npm ci refused the lock file here; npm install --no-save from the same lock"
  (cd node && npm install --ignore-scripts --no-audit --no-fund --no-save --loglevel=error)
fi

echo "verify/install.sh: installed"
for pkg in python3-celery python3-botocore ruby-sidekiq ruby-activejob python3-tenacity python3-backoff python3-rq ruby-delayed-job; do
  printf '  %-16s %s\n' "$pkg" "$(dpkg-query -W -f='${Version}' "$pkg")"
done
printf '  %-16s %s\n' node "$(node --version)"
printf '  %-16s %s\n' bullmq "$(node -p "require('./node/node_modules/bullmq/package.json').version")"
printf '  %-16s %s\n' bee-queue "$(node -p "require('./node/node_modules/bee-queue/package.json').version")"
printf '  %-16s %s\n' pg-boss "$(node -p "JSON.parse(require('fs').readFileSync('./node/node_modules/pg-boss/package.json')).version")"
printf '  %-16s %s\n' p-retry "$(node -p "JSON.parse(require('fs').readFileSync('./node/node_modules/p-retry/package.json')).version")"
