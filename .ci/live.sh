#!/usr/bin/env bash
# The live OJS server: `retrykit serve` on a free loopback port, checked by
# `retrykit conformance --server` (everything passes), then planted-bug
# variants of it that the checker must catch and name by their bug models, then the load test (50 HTTP
# workers, 20000 jobs with random failures: nothing lost or duplicated).
# Called by .ci/run; about 40 s (the planted binding faults add 8 s).
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

echo "-- planted faults (each must be caught and named by its bug model)"
# fault : the check that must fail : the bug model that must explain it
# (the last five are bugs of families the diagnosis fits to the answers)
for triple in attempt-off-by-one:http-attempts:attempt-from-zero \
              no-cap-after-jitter:http-jitter-cap:no-cap-after-jitter \
              regex-match:http-prefix-boundary:regex-match \
              early-retry:http-not-early:early-retry \
              fetch-attempt-high:http-attempt-absolute:fetch-attempt-high \
              no-defaults-merge:http-partial-max-attempts:'no-defaults-merge(max_attempts,max_interval,jitter)' \
              message-match:http-match-message:message-match \
              glob-match:http-match-glob:glob-match \
              dead-letter-pages:http-dead-letter-filter:dead-letter-queue-filter-ignored \
              polynomial-as-exponential:http-strategy-polynomial:'strategy-as(polynomial→exponential)' \
              linear-as-exponential:http-strategy-linear:'strategy-as(linear→exponential)' \
              delay-doubled:http-cap:'time-factor(×2)' \
              exhaust-late:http-visibility-timeout:'exhaustion-offset(+1)' \
              discard-code-ignored:http-code-discard:'handler-codes-ignored(DISCARD)'; do
  IFS=: read -r fault check model <<<"$triple"
  start_serve "$fault" --plant "$fault"
  status=0
  "$tmp/retrykit" conformance --server "$URL" --format json -o "$tmp/$fault.json" --format text -o "$tmp/$fault.txt" || status=$?
  if [ "$status" -ne 1 ]; then
    echo "planted fault $fault: conformance --server exited $status, want 1 (caught)"; exit 1
  fi
  python3 - "$tmp/$fault.json" "$check" "$fault" "$model" <<'PY'
import json, sys
rep, check, fault, model = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4]
st = {r["id"]: r["status"] for r in rep["results"]}
if st.get(check) != "fail":
    sys.exit(f"planted fault {fault}: {check} is {st.get(check)!r}, want fail")
named = [c for c in rep["causes"] if c.get("reproduced") and (c["class"] == "bug:" + model or model in (c.get("equivalent") or []))]
if not named or check not in named[0]["ids"] or not isinstance(named[0].get("passes_replayed"), int):
    sys.exit(f"planted fault {fault}: no cause bug:{model} explains {check} with the passes it was replayed on; causes {[(c['class'], c['ids'], c.get('passes_replayed')) for c in rep['causes']]}")
bad = sorted(i for i, s in st.items() if s != "pass")
print(f"planted fault {fault}: caught by {', '.join(bad)}; named bug:{model}")
PY
  grep -qF "bug:$model" "$tmp/$fault.txt" || { echo "planted fault $fault: the text report of the same run does not name bug:$model"; exit 1; }
done

echo "-- planted binding faults (each must fail its check)"
# fault : the check that must fail (these rules have no retry bug model)
for pair in no-location:http-location no-version-on-errors:http-ojs-version \
            bad-error-object:http-error-object text-errors:http-content-type \
            paused-accepts:http-paused-queue rate-limit-ignored:http-rate-limit-attempt \
            rate-limit-spends-attempt:http-rate-limit-attempt \
            snooze-spends-attempt:http-ext-snooze; do
  IFS=: read -r fault check <<<"$pair"
  start_serve "$fault" --plant "$fault"
  status=0
  "$tmp/retrykit" conformance --server "$URL" --run "$check" --format json -o "$tmp/$fault.json" || status=$?
  if [ "$status" -ne 1 ]; then
    echo "planted fault $fault: conformance --server exited $status, want 1 (caught)"; exit 1
  fi
  python3 - "$tmp/$fault.json" "$check" "$fault" <<'PY'
import json, sys
rep, check, fault = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
st = {r["id"]: r["status"] for r in rep["results"]}
if st.get(check) != "fail":
    sys.exit(f"planted fault {fault}: {check} is {st.get(check)!r}, want fail")
print(f"planted fault {fault}: caught by {check}")
PY
done
