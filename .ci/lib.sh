# Sections of the CI script: sourced by .ci/run.
#
#   section NAME CMD...      run CMD now, its output shown as it comes
#   section_bg NAME CMD...   start CMD in the background, its output kept in
#                            $ci_logs/NAME.log and shown when it is waited for
#   section_wait NAME...     wait for background sections (all when no NAME):
#                            a failed one prints its whole log and fails the run
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
# ("NAME SECONDS", the time on the project's 2-core machines). A section with
# no recorded time is listed by section_times but does not fail the run.

ci_logs=$(mktemp -d "${TMPDIR:-/tmp}/retrykit-ci.XXXXXX")
ci_start=$(date +%s)
declare -A ci_bg_pid=() ci_bg_start=()

# ci_record NAME SECONDS RC: one line of $ci_logs/times.
ci_record() { printf '%s %s %s\n' "$1" "$2" "$3" >>"$ci_logs/times"; }

section() {
  local name=$1 t0 rc; shift
  echo "== $name"
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
  local name=$1; shift
  echo "== $name (in the background; log $ci_logs/$name.log)"
  ci_bg_start[$name]=$(date +%s)
  (
    set +e
    (set -e; "$@") >"$ci_logs/$name.log" 2>&1
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

# ci_stop_bg: on an early exit, stop the background sections still running
# (each a subshell whose children are its process group's members).
ci_stop_bg() {
  local name
  for name in "${!ci_bg_pid[@]}"; do
    pkill -TERM -P "${ci_bg_pid[$name]}" 2>/dev/null || true
    kill -TERM "${ci_bg_pid[$name]}" 2>/dev/null || true
  done
}

section_times() {
  local recorded=.ci/times
  python3 - "$recorded" "$ci_logs/times" "$(($(date +%s) - ci_start))" <<'PY'
import sys
recorded, measured, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
rec = {}
for line in open(recorded, encoding="utf-8"):
    line = line.split("#", 1)[0].split()
    if len(line) >= 2:
        rec[line[0]] = int(line[1])
rows, over, unrecorded = [], [], []
for line in open(measured, encoding="utf-8"):
    name, secs, rc = line.split()
    secs = int(secs)
    r = rec.get(name)
    if r is None:
        unrecorded.append(name)
        rows.append((name, "-", secs, "-"))
        continue
    # A recorded time under 10 s is judged against 10 s: the shared machine's
    # noise is seconds, whatever the section.
    limit = 2 * max(r, 10)
    rows.append((name, r, secs, "%.1f" % (secs / max(r, 1))))
    if secs > limit:
        over.append("%s took %d s, more than twice its recorded %d s" % (name, secs, max(r, 10)))
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
