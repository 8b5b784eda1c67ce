#!/usr/bin/env bash
# Test of .ci/services.sh: two runs side by side (two env files, as two users
# or two checkouts would have) get separate state directories, and stopping one
# leaves the other's servers running.
set -euo pipefail
cd "$(dirname "$0")/.."

tmp=$(mktemp -d)
chmod 755 "$tmp" # the postgres user (when we are root) must reach the data directory
envA=$tmp/a.env envB=$tmp/b.env
cleanup() {
  RETRYKIT_SERVICES_ENV=$envA .ci/services.sh stop >/dev/null 2>&1 || true
  RETRYKIT_SERVICES_ENV=$envB .ci/services.sh stop >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "services_test: $*" >&2; exit 1; }

alive() { # env file → succeeds when both of its servers answer
  (
    # shellcheck disable=SC1090
    . "$1"
    pg_isready -q -d "$RETRYKIT_TEST_DATABASE_URL" &&
      redis-cli -h "${RETRYKIT_TEST_REDIS_ADDR%:*}" -p "${RETRYKIT_TEST_REDIS_ADDR#*:}" ping 2>/dev/null | grep -q PONG
  )
}
state_of() { sed -n "s/^export RETRYKIT_SERVICES_STATE='\(.*\)'$/\1/p" "$1"; }

RETRYKIT_SERVICES_ENV=$envA RETRYKIT_SERVICES_DIR=$tmp .ci/services.sh start >/dev/null
RETRYKIT_SERVICES_ENV=$envB RETRYKIT_SERVICES_DIR=$tmp .ci/services.sh start >/dev/null
stA=$(state_of "$envA") stB=$(state_of "$envB")
[ -n "$stA" ] && [ -d "$stA" ] || fail "run A recorded no state directory"
[ "$stA" != "$stB" ] || fail "both runs share the state directory $stA"
alive "$envA" || fail "run A's servers are not up"
alive "$envB" || fail "run B's servers are not up after B started: B stopped A's? ($(cat "$envB"))"
alive "$envA" || fail "starting run B stopped run A's servers"

cp "$envA" "$tmp/a.saved"
RETRYKIT_SERVICES_ENV=$envA .ci/services.sh stop >/dev/null
[ ! -e "$envA" ] || fail "stop left $envA"
[ ! -e "$stA" ] || fail "stop left run A's state directory $stA"
! alive "$tmp/a.saved" || fail "stop A left A's servers running"
alive "$envB" || fail "stopping run A stopped run B's servers"

# An env file pointing at a directory this script did not make is left alone.
mkdir "$tmp/foreign"
echo "export RETRYKIT_SERVICES_STATE='$tmp/foreign'" >"$tmp/foreign.env"
RETRYKIT_SERVICES_ENV=$tmp/foreign.env .ci/services.sh stop >/dev/null 2>&1
[ -d "$tmp/foreign" ] || fail "stop deleted a directory it did not create"

RETRYKIT_SERVICES_ENV=$envB .ci/services.sh stop >/dev/null
[ ! -e "$stB" ] || fail "stop left run B's state directory"
echo "services_test: ok"
