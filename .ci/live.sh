#!/usr/bin/env bash
# The live OJS server: `retrykit serve` on a free loopback port, checked by
# `retrykit conformance --server` (everything passes), then planted-bug
# variants of it that the checker must catch, then the load test (50 HTTP
# workers, 20000 jobs with random failures: nothing lost or duplicated).
# Called by .ci/run; about 30 s.
set -euo pipefail
cd "$(dirname "$0")/.."

tmp=$(mktemp -d "${TMPDIR:-/tmp}/retrykit-live.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/retrykit" ./cmd/retrykit
go build -o "$tmp/ojsload" ./cmd/ojsload

# start_serve NAME [serve flags...]: starts `retrykit serve` on a free
# loopback port and sets URL to the address it prints.
start_serve() {
  local name=$1; shift
  "$tmp/retrykit" serve --addr 127.0.0.1:0 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  pids+=($!)
  for _ in $(seq 100); do
    URL=$(head -n1 "$tmp/$name.out" 2>/dev/null || true)
    [ -n "$URL" ] && return 0
    sleep 0.1
  done
  echo "retrykit serve ($name) did not start:"; cat "$tmp/$name.err"; exit 1
}

echo "-- conformance --server against retrykit serve (must pass)"
start_serve correct
"$tmp/retrykit" conformance --server "$URL"

echo "-- load test against retrykit serve"
"$tmp/ojsload" --server "$URL" --workers 50 --jobs 20000 --label "retrykit serve"

echo "-- planted faults (each must be caught)"
# fault and the check that must fail for it
for pair in attempt-off-by-one:http-attempts no-cap-after-jitter:http-jitter-cap \
            regex-match:http-prefix-boundary early-retry:http-not-early; do
  fault=${pair%%:*} check=${pair##*:}
  start_serve "$fault" --plant "$fault"
  status=0
  "$tmp/retrykit" conformance --server "$URL" --format json -o "$tmp/$fault.json" || status=$?
  if [ "$status" -ne 1 ]; then
    echo "planted fault $fault: conformance --server exited $status, want 1 (caught)"; exit 1
  fi
  python3 - "$tmp/$fault.json" "$check" "$fault" <<'PY'
import json, sys
rep, check, fault = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
st = {r["id"]: r["status"] for r in rep["results"]}
if st.get(check) != "fail":
    sys.exit(f"planted fault {fault}: {check} is {st.get(check)!r}, want fail")
bad = sorted(i for i, s in st.items() if s != "pass")
print(f"planted fault {fault}: caught by {', '.join(bad)}")
PY
done
