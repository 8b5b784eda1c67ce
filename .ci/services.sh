#!/usr/bin/env bash
# Throwaway PostgreSQL and Redis servers for the integration suites
# (integrations/river, integrations/asynq).
#
#   .ci/services.sh start   start both on free loopback ports, write .ci/services.env
#   .ci/services.sh stop    stop the servers .ci/services.env records, delete their data
#
# .ci/services.env exports RETRYKIT_TEST_DATABASE_URL (a PostgreSQL URL) and
# RETRYKIT_TEST_REDIS_ADDR (host:port); source it before `go test`.
#
# Each start makes a fresh state directory (mktemp -d, under
# $RETRYKIT_SERVICES_DIR when set, else under ${TMPDIR:-/tmp}) and records it,
# with the servers' data directory and pid, in the env file
# (RETRYKIT_SERVICES_ENV, default .ci/services.env). stop stops only what that
# file records, so two users (or two checkouts, or two CI runs) on one machine
# never stop each other's servers. A start over an env file left by an earlier
# start in this checkout stops that earlier run first.
#
# PostgreSQL 15 is expected on PATH (initdb, pg_ctl). The server refuses to run
# as root, so when run as root the data directory is owned by, and the server
# runs as, the `postgres` system user. Redis comes from Debian's redis-server
# package, installed when absent; it runs without persistence.
set -euo pipefail
cd "$(dirname "$0")/.."

envfile=${RETRYKIT_SERVICES_ENV:-.ci/services.env}
state= # set by start, or read from the env file by stop
marker=.retrykit-services # a file in every state directory this script made

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

as_pg() { # run a command as the postgres user when we are root
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

start_postgres() {
  local port dir
  port=$(free_port)
  dir=$state/pg
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then chown postgres: "$state" "$dir"; fi
  chmod 700 "$dir"
  as_pg initdb -D "$dir/data" -U postgres --auth=trust --no-sync -E UTF8 >"$state/initdb.log" 2>&1 ||
    { cat "$state/initdb.log"; return 1; }
  # fsync off: a throwaway test server, speed over durability.
  as_pg pg_ctl -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-h 127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
    start >/dev/null || { cat "$dir/server.log"; return 1; }
  as_pg psql -h 127.0.0.1 -p "$port" -U postgres -qc 'CREATE DATABASE retrykit_test' >/dev/null
  record RETRYKIT_SERVICES_PG_DATA "$dir/data"
  record RETRYKIT_TEST_DATABASE_URL "postgres://postgres@127.0.0.1:$port/retrykit_test?sslmode=disable"
  echo "services: postgres on 127.0.0.1:$port"
}

start_redis() {
  if ! command -v redis-server >/dev/null; then
    echo "services: installing redis-server"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  fi
  local port
  port=$(free_port)
  mkdir -p "$state/redis"
  redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
    --daemonize yes --pidfile "$state/redis/redis.pid" --logfile "$state/redis/redis.log" \
    --dir "$state/redis"
  for _ in $(seq 100); do
    if redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; then break; fi
    sleep 0.1
  done
  redis-cli -h 127.0.0.1 -p "$port" ping | grep -q PONG
  record RETRYKIT_SERVICES_REDIS_PID "$(cat "$state/redis/redis.pid")"
  record RETRYKIT_TEST_REDIS_ADDR "127.0.0.1:$port"
  echo "services: redis on 127.0.0.1:$port"
}

# record appends an assignment to the env file; the values are ours (paths
# from mktemp, numbers), single quotes are enough.
record() { echo "export $1='$2'" >>"$envfile"; }

# read_env loads what the env file records, without trusting it to be a script.
read_env() {
  RETRYKIT_SERVICES_STATE= RETRYKIT_SERVICES_PG_DATA= RETRYKIT_SERVICES_REDIS_PID=
  local line key val
  while IFS= read -r line; do
    [[ $line =~ ^export\ (RETRYKIT_SERVICES_[A-Z_]+)=\'([^\']*)\'$ ]] || continue
    key=${BASH_REMATCH[1]} val=${BASH_REMATCH[2]}
    case $key in
    RETRYKIT_SERVICES_STATE | RETRYKIT_SERVICES_PG_DATA | RETRYKIT_SERVICES_REDIS_PID) printf -v "$key" %s "$val" ;;
    esac
  done <"$envfile"
}

# stop stops the servers the env file records and deletes their state
# directory; with no env file there is nothing of ours to stop.
stop() {
  if [ ! -f "$envfile" ]; then
    echo "services: no $envfile, nothing to stop"
    return 0
  fi
  read_env
  local st=$RETRYKIT_SERVICES_STATE
  if [ -n "$st" ] && [ -f "$st/$marker" ]; then
    local data=$RETRYKIT_SERVICES_PG_DATA
    if [ -n "$data" ] && [ "${data#"$st"/}" != "$data" ] && [ -d "$data" ]; then
      as_pg pg_ctl -D "$data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    local pid=$RETRYKIT_SERVICES_REDIS_PID
    # Only a redis-server whose pid file is in our state directory is ours.
    if [[ $pid =~ ^[0-9]+$ ]] && [ "$(cat "$st/redis/redis.pid" 2>/dev/null)" = "$pid" ]; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
    fi
    rm -rf "$st"
  elif [ -n "$st" ]; then
    echo "services: $st (recorded in $envfile) is not a state directory of this script; left alone" >&2
  fi
  rm -f "$envfile"
}

case "${1:-}" in
start)
  stop >/dev/null # an earlier start of this checkout (same env file) only
  parent=${RETRYKIT_SERVICES_DIR:-${TMPDIR:-/tmp}}
  mkdir -p "$parent"
  state=$(mktemp -d "$parent/retrykit-services.XXXXXX")
  chmod 755 "$state"
  : >"$state/$marker"
  : >"$envfile"
  record RETRYKIT_SERVICES_STATE "$state"
  start_postgres
  start_redis
  echo "services: state in $state, wrote $envfile"
  ;;
stop)
  stop
  echo "services: stopped"
  ;;
*)
  echo "usage: $0 start|stop" >&2
  exit 2
  ;;
esac
