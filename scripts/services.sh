#!/usr/bin/env bash
# Throwaway PostgreSQL and Redis for Posthorn's tests.
#
#   eval "$(scripts/services.sh start)"   # installs if missing, starts, prints `export` lines
#   scripts/services.sh stop              # stops only what `start` launched, removes its dir
#   scripts/services.sh env               # prints the `export` lines again
#
# Everything lives in $POSTHORN_SERVICES_DIR (default /tmp/posthorn-services); progress goes
# to stderr so that stdout carries only the `export` lines.
set -euo pipefail

SVC_DIR=${POSTHORN_SERVICES_DIR:-/tmp/posthorn-services}
# Below 32768: ports in Linux's ephemeral range (32768-60999) can be held for a moment by an
# outgoing connection, and PostgreSQL then fails to start with "Address already in use".
PG_PORT=${POSTHORN_PG_PORT:-25432}
REDIS_PORT=${POSTHORN_REDIS_PORT:-26379}

log() { echo "services.sh: $*" >&2; }

# Root may install packages directly; anyone else goes through sudo.
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# initdb and postgres refuse to run as root, so root runs them as `postgres`.
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_bin() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1
}

install_missing() {
  local need=()
  command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
  command -v redis-cli >/dev/null 2>&1 || need+=(redis-tools)
  [ -n "$(pg_bin)" ] && [ -x "$(pg_bin)/initdb" ] || need+=(postgresql)
  command -v psql >/dev/null 2>&1 || need+=(postgresql-client)
  if [ ${#need[@]} -gt 0 ]; then
    log "installing ${need[*]}"
    as_root apt-get update -qq >&2
    as_root env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
  fi
}

print_env() {
  echo "export POSTHORN_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$PG_PORT/postgres"
  echo "export POSTHORN_TEST_REDIS_URL=redis://127.0.0.1:$REDIS_PORT/"
}

pg_running() {
  [ -f "$SVC_DIR/pg/data/postmaster.pid" ] && as_pg "$(pg_bin)/pg_ctl" -D "$SVC_DIR/pg/data" status >/dev/null 2>&1
}

redis_running() {
  [ -f "$SVC_DIR/redis/redis.pid" ] && kill -0 "$(cat "$SVC_DIR/redis/redis.pid")" 2>/dev/null
}

start_pg() {
  local bin
  bin=$(pg_bin)
  rm -rf "$SVC_DIR/pg"
  mkdir -p "$SVC_DIR/pg"
  [ "$(id -u)" = 0 ] && chown postgres: "$SVC_DIR/pg"
  as_pg "$bin/initdb" -D "$SVC_DIR/pg/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 \
    --no-sync >"$SVC_DIR/initdb.log" 2>&1 || { cat "$SVC_DIR/initdb.log" >&2; return 1; }
  as_pg "$bin/pg_ctl" -D "$SVC_DIR/pg/data" -l "$SVC_DIR/pg/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $SVC_DIR/pg -c fsync=off \
        -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
    start >/dev/null || { cat "$SVC_DIR/pg/server.log" >&2; return 1; }
  for _ in $(seq 1 200); do
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -U postgres && return 0
    sleep 0.05
  done
  log "PostgreSQL did not become ready"; cat "$SVC_DIR/pg/server.log" >&2; return 1
}

start_redis() {
  rm -rf "$SVC_DIR/redis"
  mkdir -p "$SVC_DIR/redis"
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$SVC_DIR/redis" --save '' \
    --appendonly no --daemonize yes --pidfile "$SVC_DIR/redis/redis.pid" \
    --logfile "$SVC_DIR/redis/redis.log"
  for _ in $(seq 1 200); do
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG && return 0
    sleep 0.05
  done
  log "Redis did not become ready"; cat "$SVC_DIR/redis/redis.log" >&2; return 1
}

start() {
  install_missing
  mkdir -p "$SVC_DIR"
  chmod 755 "$SVC_DIR"
  if pg_running; then log "PostgreSQL already running on $PG_PORT"; else start_pg; fi
  if redis_running; then log "Redis already running on $REDIS_PORT"; else start_redis; fi
  log "PostgreSQL on 127.0.0.1:$PG_PORT, Redis on 127.0.0.1:$REDIS_PORT (data in $SVC_DIR)"
  print_env
}

stop() {
  if pg_running; then
    as_pg "$(pg_bin)/pg_ctl" -D "$SVC_DIR/pg/data" -m fast -w stop >/dev/null
    log "PostgreSQL stopped"
  fi
  if redis_running; then
    local pid
    pid=$(cat "$SVC_DIR/redis/redis.pid")
    kill "$pid"
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    log "Redis stopped"
  fi
  rm -rf "$SVC_DIR"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  env) print_env ;;
  *) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
