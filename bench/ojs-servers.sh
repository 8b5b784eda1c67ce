#!/usr/bin/env bash
# push→fetch→ack throughput over loopback of `retrykit serve` and of a public
# OJS server, ojs-backend-redis at commit 5b459da (the last that builds from
# its own repository, once its gRPC part is removed) on a real Redis, side by
# side in the same run; then the cost of `retrykit conformance --server` per
# checked retry, and its report on each server. docs/benchmarks.md, section
# "OJS servers over HTTP", records a run.
#
#   bash bench/ojs-servers.sh [--src GITDIR] [--dry-run] [ROUNDS]   (default 3 rounds)
#
# The third-party server is built outside the repository, in $TMPDIR, from a
# git directory of github.com/openjobspec/ojs-backend-redis: the one given
# by --src, else $OJS_REDIS_GIT, else a bare clone the script makes (once)
# in ${XDG_CACHE_HOME:-$HOME/.cache}/retrykit/ojs-backend-redis.git. Nothing
# of it is committed here. --dry-run prints the settings and stops.
# Needs redis-server (Debian: apt-get install redis-server), python3, go.
set -euo pipefail
cd "$(dirname "$0")/.."
usage_line='usage: bash bench/ojs-servers.sh [--src GITDIR] [--dry-run] [ROUNDS]'
usage() { echo "$usage_line" >&2; exit 2; }
src=${OJS_REDIS_GIT:-}
dry=false
rounds=3
while [ $# -gt 0 ]; do
  case $1 in
    --src) [ $# -ge 2 ] && [ -n "$2" ] || { echo "ojs-servers.sh: --src: needs a git directory" >&2; usage; }; src=$2; shift 2 ;;
    --src=*) src=${1#--src=}; [ -n "$src" ] || { echo "ojs-servers.sh: --src: needs a git directory" >&2; usage; }; shift ;;
    --dry-run) dry=true; shift ;;
    -h|--help) echo "$usage_line"; exit 0 ;;
    -*) echo "ojs-servers.sh: unknown flag $1" >&2; usage ;;
    *) [[ $1 =~ ^[1-9][0-9]{0,2}$ ]] || { echo "ojs-servers.sh: ROUNDS: want 1..999, got $1" >&2; usage; }; rounds=$1; shift ;;
  esac
done
[ -n "$src" ] || src=${XDG_CACHE_HOME:-$HOME/.cache}/retrykit/ojs-backend-redis.git
jobs=${JOBS:-20000}
workers=${WORKERS:-50}
commit=5b459da
if $dry; then
  printf 'source: %s\nrounds: %s\njobs: %s\nworkers: %s\n' "$src" "$rounds" "$jobs" "$workers"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rk-ojs-servers.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_http() { for _ in $(seq 100); do curl -fsS "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "no answer from $1" >&2; exit 1; }

go build -o "$tmp/retrykit" ./cmd/retrykit
go build -o "$tmp/ojsload" ./cmd/ojsload

# ojs-backend-redis, built once per machine outside the repository.
bin=${TMPDIR:-/tmp}/rk-ojs-backend-redis-$commit
if [ ! -x "$bin" ]; then
  if [ ! -d "$src" ]; then
    mkdir -p "$(dirname "$src")"
    git clone -q --bare https://github.com/openjobspec/ojs-backend-redis "$src"
  fi
  mkdir "$tmp/src"
  git -C "$src" archive "$commit" | tar -x -C "$tmp/src"
  rm -rf "$tmp/src/internal/grpc"
  python3 - "$tmp/src/cmd/ojs-server/main.go" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
for line in ('\tojsgrpc "github.com/openjobspec/ojs-backend-redis/internal/grpc"\n', '\t"google.golang.org/grpc"\n', '\t"net"\n', '\tgrpcServer.GracefulStop()\n'):
    s = s.replace(line, '')
i, j = s.index('\t// Start gRPC server'), s.index('\t// Graceful shutdown')
open(p, 'w').write(s[:i] + s[j:])
PY
  (cd "$tmp/src" && go mod tidy >/dev/null 2>&1 && go build -o "$bin" ./cmd/ojs-server)
fi

rport=$(port)
redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" >"$tmp/redis.log" 2>&1 &
pids+=($!)
oport=$(port)
OJS_PORT=$oport REDIS_URL=redis://127.0.0.1:$rport "$bin" >"$tmp/ojs-redis.log" 2>&1 &
pids+=($!)
redis_url=http://127.0.0.1:$oport
wait_http "$redis_url/ojs/v1/health"

"$tmp/retrykit" serve --addr 127.0.0.1:0 >"$tmp/serve.out" 2>"$tmp/serve.err" &
pids+=($!)
for _ in $(seq 100); do serve_url=$(head -n1 "$tmp/serve.out" 2>/dev/null || true); [ -n "$serve_url" ] && break; sleep 0.1; done
wait_http "$serve_url/ojs/v1/health"

echo "== push→fetch→ack, $jobs jobs, $workers workers, no failures ($rounds rounds, alternating)"
# load LINES ARGS...: runs ojsload and prints the first LINES lines of its
# report (a server's problems are printed, never fatal here).
load() { local n=$1; shift; "$tmp/ojsload" "$@" >"$tmp/load.out" 2>&1 || true; sed -n "1,${n}p" "$tmp/load.out"; }
for r in $(seq "$rounds"); do
  load 1 --server "$serve_url" --jobs "$jobs" --workers "$workers" --fail 0 --label "retrykit-serve#$r"
  load 1 --server "$redis_url" --jobs "$jobs" --workers "$workers" --fail 0 --attempts=false --label "ojs-backend-redis#$r"
done
echo "== with 30% random failures (3 attempts, 1ms delays)"
load 4 --server "$serve_url" --jobs "$jobs" --workers "$workers" --fail 0.3 --label retrykit-serve
load 4 --server "$redis_url" --jobs "$jobs" --workers "$workers" --fail 0.3 --attempts=false --label ojs-backend-redis

echo "== conformance --server: cost per checked retry (checker process CPU and wall time)"
for name in serve redis; do
  url=$serve_url; [ $name = redis ] && url=$redis_url
  for r in $(seq "$rounds"); do
    /usr/bin/time -o "$tmp/time.txt" -f "$name round $r: wall %e s, checker cpu %U+%S s, max rss %M KB" \
      "$tmp/retrykit" conformance --server "$url" --format json -o "$tmp/$name.json" || true
    cat "$tmp/time.txt"
    python3 - "$tmp/$name.json" <<'PY'
import json, re, sys
rep = json.load(open(sys.argv[1]))
figs = rep.get("figures") or []
n = int(re.search(r"(\d+) retries", figs[0]).group(1)) if figs and "retries" in figs[0] else 0
req = next((int(f.split(": ")[1]) for f in figs if f.startswith("requests sent")), 0)
t = rep["totals"]
print(f"  {n} retries checked, {req} requests ({req / max(n, 1):.1f} per checked retry), "
      f"{rep['elapsed_ns'] / 1e6:.0f} ms; pass {t['pass']} fail {t['fail']} error {t['error']} not run {t['not_run']}")
print("  " + figs[0] if figs else "")
PY
  done
done
echo "== conformance --server against ojs-backend-redis $commit (report)"
"$tmp/retrykit" conformance --server "$redis_url" >"$tmp/redis-report.txt" || true
sed -n '1,40p' "$tmp/redis-report.txt"
