# Sections of the CI script: sourced by .ci/run.
#
#   section [--after B] NAME CMD...
#                            run CMD now, its output shown as it comes; with
#                            --after, once background section B has passed
#                            (the wait is not counted in NAME's time)
#   section_bg [--after B] NAME CMD...
#                            start CMD in the background, its output kept in
#                            $ci_logs/NAME.log and shown when it is waited for;
#                            with --after, once background section B has
#                            passed (its time counts from then)
#   section_wait NAME...     wait for background sections (all when no NAME):
#                            a failed one prints its whole log and fails the run
#   ci_after NAME            inside a step: wait until the background section
#                            NAME has finished, and fail if it failed
#   section_times            the time check: fails the run when a section took
#                            more than twice its time recorded in .ci/times
#
# CMD is a command or a shell function; it runs in a subshell with `set -e`,
# so a failing command fails the section (use `|| true` where failure is
# expected). Each section's wall time is appended to $ci_logs/times.
#
# To add a step: write it as a function, run it with `section NAME fn` (or
# section_bg for an independent suite that mostly waits, such as a test
# against a real server), and record its measured time in .ci/times
# ("NAME WARM COLD": seconds on the project's 2-core machines with Go's
# caches warm, and on a cold machine; ci_detect_cold says which applies). A
# section with no recorded time is listed by section_times but does not
# fail the run.

ci_logs=$(mktemp -d "${TMPDIR:-/tmp}/retrykit-ci.XXXXXX")
ci_start=$(date +%s)
ci_cold=0
declare -A ci_bg_pid=() ci_bg_start=()

# ci_detect_cold: the run is cold when Go's build cache holds no build of
# the standard library (fmt is stale: a fresh machine, or a cleaned cache)
# or the module cache lacks the largest dependency (the Temporal server,
# which integrations/temporal and verify build). A warm cache with the
# repository's own packages changed is still warm: those are seconds.
ci_detect_cold() {
  local why=""
  [ "$(go list -f '{{.Stale}}' fmt)" = true ] && why="the standard library is not in the build cache"
  [ -d "$(go env GOMODCACHE)/go.temporal.io/server@v1.32.1" ] || why="${why:+$why; }the module cache lacks go.temporal.io/server"
  if [ -n "$why" ]; then ci_cold=1; fi
  echo "ci: judged a $([ "$ci_cold" = 1 ] && echo "cold run ($why)" || echo "warm run (Go's caches hold the standard library and the Temporal server)")"
}

# ci_record NAME SECONDS RC: one line of $ci_logs/times.
ci_record() { printf '%s %s %s\n' "$1" "$2" "$3" >>"$ci_logs/times"; }

section() {
  local after=""
  if [ "$1" = --after ]; then after=$2; shift 2; fi
  local name=$1 t0 rc; shift
  echo "== $name${after:+ (after $after)}"
  if [ -n "$after" ]; then ci_after "$after"; fi
  t0=$(date +%s)
  set +e
  (set -e; "$@")
  rc=$?
  set -e
  ci_record "$name" "$(($(date +%s) - t0))" "$rc"
  if [ "$rc" -ne 0 ]; then
    echo "ci: section $name failed (exit $rc) after $(($(date +%s) - t0)) s"; exit "$rc"
  fi
  echo "-- $name: $(($(date +%s) - t0)) s"
}

section_bg() {
  local after=""
  if [ "$1" = --after ]; then after=$2; shift 2; fi
  local name=$1; shift
  echo "== $name (in the background${after:+, after $after}; log $ci_logs/$name.log)"
  ci_bg_start[$name]=$(date +%s)
  (
    set +e
    if [ -n "$after" ]; then
      ci_after "$after" >"$ci_logs/$name.log" 2>&1 || { echo 1 >"$ci_logs/$name.rc"; echo 0 >"$ci_logs/$name.secs"; exit 1; }
      ci_bg_start[$name]=$(date +%s)
    fi
    (set -e; "$@") >>"$ci_logs/$name.log" 2>&1
    rc=$?
    echo "$rc" >"$ci_logs/$name.rc"
    echo "$(($(date +%s) - ${ci_bg_start[$name]}))" >"$ci_logs/$name.secs"
    exit "$rc"
  ) &
  ci_bg_pid[$name]=$!
}

section_wait() {
  local names=("$@") name rc failed=0
  [ "${#names[@]}" -gt 0 ] || names=("${!ci_bg_pid[@]}")
  for name in "${names[@]}"; do
    [ -n "${ci_bg_pid[$name]:-}" ] || { echo "ci: no background section $name"; exit 1; }
    set +e
    wait "${ci_bg_pid[$name]}"
    rc=$?
    set -e
    unset "ci_bg_pid[$name]"
    local secs
    secs=$(cat "$ci_logs/$name.secs" 2>/dev/null || echo $(($(date +%s) - ${ci_bg_start[$name]})))
    ci_record "$name" "$secs" "$rc"
    if [ "$rc" -ne 0 ]; then
      echo "== $name (background) FAILED (exit $rc) after $secs s; its log:"
      cat "$ci_logs/$name.log"
      failed=1
    else
      echo "== $name (background): ok, $secs s"
      if [ "$(wc -l <"$ci_logs/$name.log")" -le 40 ]; then
        sed 's/^/   /' "$ci_logs/$name.log"
      else
        echo "   … (last 25 of $(wc -l <"$ci_logs/$name.log") lines; the whole log: $ci_logs/$name.log)"
        tail -n 25 "$ci_logs/$name.log" | sed 's/^/   /'
      fi
    fi
  done
  if [ "$failed" -ne 0 ]; then exit 1; fi
}

ci_after() {
  local name=$1
  while [ ! -s "$ci_logs/$name.rc" ]; do sleep 1; done
  if [ "$(cat "$ci_logs/$name.rc")" != 0 ]; then
    echo "ci: needs section $name, which failed"; return 1
  fi
}

# ci_kill_tree PID: stops PID and every process it started, children first
# seen from the top, so that none is left behind.
ci_kill_tree() {
  local child
  kill -STOP "$1" 2>/dev/null || true
  for child in $(pgrep -P "$1" 2>/dev/null); do ci_kill_tree "$child"; done
  kill -TERM "$1" 2>/dev/null || true
  kill -CONT "$1" 2>/dev/null || true
}

# ci_stop_bg: on an early exit, stop the background sections still running.
ci_stop_bg() {
  local name
  for name in "${!ci_bg_pid[@]}"; do ci_kill_tree "${ci_bg_pid[$name]}"; done
}

section_times() {
  local recorded=${CI_TIMES:-.ci/times}
  python3 - "$recorded" "$ci_logs/times" "$(($(date +%s) - ci_start))" "$ci_cold" "${CI_TIME_FLOOR:-10}" <<'PY'
import sys
recorded, measured, total, cold = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
floor = int(sys.argv[5])
rec = {}
for line in open(recorded, encoding="utf-8"):
    line = line.split("#", 1)[0].split()
    if len(line) >= 3:
        rec[line[0]] = int(line[2] if cold else line[1])
print("times judged against the %s column of %s" % ("cold" if cold else "warm", recorded))
rows, over, unrecorded = [], [], []
for line in open(measured, encoding="utf-8"):
    name, secs, rc = line.split()
    secs = int(secs)
    r = rec.get(name)
    if r is None:
        unrecorded.append(name)
        rows.append((name, "-", secs, "-"))
        continue
    # A recorded time under the floor (10 s) is judged against the floor:
    # the shared machine's noise is seconds, whatever the section.
    limit = 2 * max(r, floor)
    rows.append((name, r, secs, "%.1f" % (secs / max(r, 1))))
    if secs > limit:
        over.append("%s took %d s, more than twice its recorded %d s" % (name, secs, max(r, floor)))
print("%-28s %9s %9s %6s" % ("section", "recorded", "measured", "ratio"))
for row in rows:
    print("%-28s %9s %9s %6s" % row)
print("total wall time: %d s (%dm%02ds)" % (total, total // 60, total % 60))
for name in unrecorded:
    print("ci: section %s has no recorded time in %s: add \"%s SECONDS\"" % (name, recorded, name))
if over:
    print("ci: sections over twice their recorded time (record a new time in %s if the step grew on purpose):" % recorded)
    for o in over:
        print("  " + o)
    sys.exit(1)
PY
}
