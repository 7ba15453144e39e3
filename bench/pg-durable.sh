#!/usr/bin/env bash
# A PostgreSQL cluster with the defaults (fsync, synchronous_commit and full_page_writes on),
# on loopback, for the durable figures of docs/performance.md. scripts/services.sh's test
# cluster runs with fsync=off, which no benchmark may call durable.
#
#   eval "$(bash bench/pg-durable.sh start)"   # prints the export line for bench/run.sh
#   bash bench/run.sh --store postgres
#   bash bench/pg-durable.sh stop
#
# Needs the PostgreSQL server binaries (`bash scripts/services.sh start` installs them).
# Lives in $POSTHORN_PG_DURABLE_DIR (default /tmp/posthorn-pg-durable), port
# $POSTHORN_PG_DURABLE_PORT (default 25433); progress goes to stderr.
set -euo pipefail

DIR=${POSTHORN_PG_DURABLE_DIR:-/tmp/posthorn-pg-durable}
PORT=${POSTHORN_PG_DURABLE_PORT:-25433}

log() { echo "pg-durable.sh: $*" >&2; }

# initdb and postgres refuse to run as root, so root runs them as `postgres`.
as_pg() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    log "no PostgreSQL server binaries: run 'bash scripts/services.sh start' once first"
    exit 1
fi

print_env() {
    echo "export POSTHORN_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:$PORT/postgres"
}

running() {
    [ -f "$DIR/data/postmaster.pid" ] && as_pg "$bin/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1
}

case "${1:-}" in
    start)
        if running; then
            log "already running on $PORT"
        else
            rm -rf "$DIR"
            mkdir -p "$DIR"
            [ "$(id -u)" = 0 ] && chown postgres: "$DIR"
            as_pg "$bin/initdb" -D "$DIR/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 \
                >"$DIR/initdb.log" 2>&1 || { cat "$DIR/initdb.log" >&2; exit 1; }
            # Only where it listens and how many may connect differ from the defaults.
            as_pg "$bin/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
                -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c max_connections=200" \
                start >/dev/null || { cat "$DIR/server.log" >&2; exit 1; }
            log "durable PostgreSQL on 127.0.0.1:$PORT (data in $DIR)"
        fi
        print_env
        ;;
    stop)
        if running; then
            as_pg "$bin/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null
            log "stopped"
        fi
        rm -rf "$DIR"
        ;;
    env) print_env ;;
    *)
        echo "usage: $0 start|stop|env" >&2
        exit 2
        ;;
esac
