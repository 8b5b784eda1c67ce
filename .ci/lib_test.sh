#!/usr/bin/env bash
# Test of .ci/lib.sh, the sections of .ci/run (about 5 s): a failing
# foreground or background section fails the run and shows its log, --after
# waits for the section it names, and the time check fails a section that
# took more than twice its recorded time and passes one without a record.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "lib_test: $*" >&2; exit 1; }

# run_ci SCRIPT: runs SCRIPT after sourcing lib.sh, in a fresh bash; prints
# its output, returns its exit status.
run_ci() {
  CI_TIMES=$tmp/times CI_TIME_FLOOR=0 bash -c ". .ci/lib.sh; trap ci_stop_bg EXIT; $1" 2>&1
}
printf 'slow 1 1\nquick 5 5 # comment\n' >"$tmp/times"

out=$(run_ci 'section quick true; section_times') || fail "a passing run failed: $out"
[[ $out == *"quick"*"5"* ]] || fail "the time table lacks the section: $out"

out=$(run_ci 'section slow sleep 3; section_times') && fail "3 s against a recorded 1 s passed: $out"
[[ $out == *"slow took 3 s, more than twice its recorded 1 s"* ]] || fail "no over-time message: $out"

out=$(run_ci 'section new true; section_times') || fail "an unrecorded section failed the run: $out"
[[ $out == *"section new has no recorded time"* ]] || fail "no unrecorded note: $out"

out=$(run_ci 'section broken false; echo AFTER-MARK') && fail "a failing section passed: $out"
[[ $out != *AFTER-MARK* ]] || fail "the run went on after a failing section: $out"

out=$(run_ci 'f() { echo from-bg; false; echo not-reached; }; section_bg bad f; section_wait; echo AFTER-MARK') &&
  fail "a failing background section passed: $out"
[[ $out == *"bad (background) FAILED"*"from-bg"* && $out != *not-reached* && $out != *AFTER-MARK* ]] ||
  fail "a failing background section: $out"

out=$(run_ci 'a() { sleep 1; echo first >'"$tmp"'/order; }; b() { echo second >>'"$tmp"'/order; };
  section_bg a a; section_bg --after a b b; section_wait') || fail "--after: $out"
[ "$(tr '\n' ' ' <"$tmp/order")" = "first second " ] || fail "--after did not wait: $(cat "$tmp/order")"

out=$(run_ci 'section_bg bad false; section_bg --after bad b true; section_wait b') &&
  fail "a section after a failed one passed: $out"
echo "lib_test: ok"
