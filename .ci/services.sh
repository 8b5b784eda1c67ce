#!/usr/bin/env bash
# Throwaway PostgreSQL and Redis servers for the integration suites
# (integrations/river, integrations/asynq).
#
#   .ci/services.sh start   start both on free loopback ports, write .ci/services.env
#   .ci/services.sh stop    stop both and delete their data
#
# .ci/services.env exports RETRYKIT_TEST_DATABASE_URL (a PostgreSQL URL) and
# RETRYKIT_TEST_REDIS_ADDR (host:port); source it before `go test`.
#
# PostgreSQL 15 is expected on PATH (initdb, pg_ctl). The server refuses to run
# as root, so when run as root the data directory is owned by, and the server
# runs as, the `postgres` system user. Redis comes from Debian's redis-server
# package, installed when absent; it runs without persistence.
set -euo pipefail
cd "$(dirname "$0")/.."

state=${RETRYKIT_SERVICES_DIR:-/tmp/retrykit-services}
envfile=.ci/services.env

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
  echo "export RETRYKIT_TEST_DATABASE_URL='postgres://postgres@127.0.0.1:$port/retrykit_test?sslmode=disable'" >>"$envfile"
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
  echo "export RETRYKIT_TEST_REDIS_ADDR='127.0.0.1:$port'" >>"$envfile"
  echo "services: redis on 127.0.0.1:$port"
}

stop() {
  if [ -d "$state/pg/data" ]; then
    as_pg pg_ctl -D "$state/pg/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  if [ -f "$state/redis/redis.pid" ]; then
    local pid
    pid=$(cat "$state/redis/redis.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
  rm -rf "$state" "$envfile"
}

case "${1:-}" in
start)
  stop
  mkdir -p "$state"
  : >"$envfile"
  start_postgres
  start_redis
  echo "services: wrote $envfile"
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
