#!/usr/bin/env bash
# Builds the server and the load generator in release mode, starts `posthorn` on a free
# loopback port with the in-memory store (or a fresh SQLite file, or a fresh PostgreSQL
# database), runs
# `posthorn-bench` against it and always stops the server again. Arguments other than
# `--store` are passed to `posthorn-bench` (try `--help`).
#
#   bash bench/run.sh
#   bash bench/run.sh --connections 32 --duration 20
#   bash bench/run.sh --scenarios health,track,track-paced
#   bash bench/run.sh --store postgres     # then also bench/pgbench-ceiling.sh
#   bash bench/run.sh --store sqlite       # a new file in a temporary directory
#   bash bench/run.sh --scenarios workflow --contacts 0   # workflow burst and latency
#
# WEBHOOK steps may reach 127.0.0.1 only (the `workflow` scenario's receiver).
#
# `--store sqlite` serves from `$tmp/data/posthorn.db` (POSTHORN_SQLITE_SYNCHRONOUS is passed
# on as set; `full` by default); `posthorn-sqlite-ceiling` measures SQLite's own limit.
#
# `--store postgres` runs durable commits by default (synchronous_commit=on for its database;
# POSTHORN_BENCH_PG_SYNC=off to measure without, labelled NOT DURABLE, as is a server with
# fsync=off). It creates a database on the server of POSTHORN_BENCH_DATABASE_URL or
# POSTHORN_TEST_DATABASE_URL (`eval "$(bash scripts/services.sh env)"`), points
# POSTHORN_STORE at it, drops it at the end, and afterwards runs bench/pgbench-ceiling.sh
# with the measured `/v1/track` and `/v1/send` rates (POSTHORN_BENCH_SKIP_CEILING=1 skips
# that).
#
# POSTHORN_BENCH_SKIP_BUILD=1 uses the release binaries already built.
#
# POSTHORN_BENCH_LOAD=wrk puts the load on with wrk instead (bench/wrk/load.sh: `health`,
# `track-fresh` and `track` only), the tool issue #14 measured with.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

store=memory
pass=()
while (($#)); do
    case "$1" in
        --store)
            store="${2:-}"
            shift $(($# > 1 ? 2 : 1))
            ;;
        --store=*)
            store="${1#--store=}"
            shift
            ;;
        *)
            pass+=("$1")
            shift
            ;;
    esac
done
case "$store" in
    memory | postgres | sqlite) ;;
    *)
        echo "--store must be memory, sqlite or postgres" >&2
        exit 2
        ;;
esac

if [[ "${POSTHORN_BENCH_SKIP_BUILD:-0}" != 1 ]]; then
    cargo build --release -p posthorn-server -p posthorn-bench
fi

target_dir="${CARGO_TARGET_DIR:-$root/target}"
server_bin="$target_dir/release/posthorn"
bench_bin="$target_dir/release/posthorn-bench"

tmp="$(mktemp -d -t posthorn-bench.XXXXXX)"
server_pid=""
admin_url=""
db=""

stop_server() {
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill "$server_pid" 2>/dev/null || true
        # Give it a moment to shut down gracefully, then insist.
        for _ in $(seq 50); do
            kill -0 "$server_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    server_pid=""
}

cleanup() {
    stop_server
    if [[ -n "$db" ]]; then
        psql "$admin_url" -qAt -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Is something already listening on 127.0.0.1:$1?
port_taken() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

healthy() {
    if command -v curl >/dev/null 2>&1; then
        curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$1/health"
    else
        # No curl: a bare HTTP/1.0 request over bash's /dev/tcp.
        local reply
        reply="$(
            exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
            printf 'GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
            timeout 1 head -n 1 <&3
        )" 2>/dev/null || return 1
        [[ "$reply" == *" 200 "* ]]
    fi
}

store_url=memory
db_pid=""
if [[ "$store" == sqlite ]]; then
    store_url="sqlite:$tmp/data/posthorn.db"
    echo "SQLite database $tmp/data/posthorn.db (synchronous=${POSTHORN_SQLITE_SYNCHRONOUS:-full})" >&2
fi
if [[ "$store" == postgres ]]; then
    admin_url="${POSTHORN_BENCH_DATABASE_URL:-${POSTHORN_TEST_DATABASE_URL:-}}"
    if [[ -z "$admin_url" ]]; then
        echo "--store postgres needs POSTHORN_TEST_DATABASE_URL (eval \"\$(bash scripts/services.sh env)\")" >&2
        exit 2
    fi
    command -v psql >/dev/null || { echo "--store postgres needs psql" >&2; exit 2; }
    db="posthorn_bench_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
    psql "$admin_url" -qAt -v ON_ERROR_STOP=1 -c "CREATE DATABASE \"$db\"" >/dev/null
    store_url="${admin_url%/*}/$db"
    # Durable by default (each commit waits for its WAL flush); POSTHORN_BENCH_PG_SYNC=off
    # measures without that wait. The server's fsync setting is reported beside it: with
    # fsync=off (scripts/services.sh's test configuration) nothing is durable.
    sync_commit="${POSTHORN_BENCH_PG_SYNC:-on}"
    case "$sync_commit" in
        on | off) ;;
        *) echo "POSTHORN_BENCH_PG_SYNC must be on or off" >&2; exit 2 ;;
    esac
    psql "$admin_url" -qAt -v ON_ERROR_STOP=1 \
        -c "ALTER DATABASE \"$db\" SET synchronous_commit = $sync_commit" >/dev/null
    server_fsync="$(psql "$store_url" -qAt -c 'SHOW fsync')"
    if [[ "$server_fsync" == on && "$sync_commit" == on ]]; then
        echo "PostgreSQL durable: fsync=on, synchronous_commit=on" >&2
    else
        echo "PostgreSQL NOT DURABLE: fsync=$server_fsync, synchronous_commit=$sync_commit" >&2
    fi
    # The postmaster, when PostgreSQL runs on this machine: its CPU and its backends' are
    # reported too.
    data_dir="$(psql "$store_url" -qAt -c 'SHOW data_directory' 2>/dev/null || true)"
    if [[ -n "$data_dir" && -r "$data_dir/postmaster.pid" ]]; then
        db_pid="$(head -n 1 "$data_dir/postmaster.pid")"
    fi
    echo "PostgreSQL database $db${db_pid:+ (postmaster $db_pid)}" >&2
fi

port=""
for _ in $(seq 20); do
    candidate=$((20000 + RANDOM % 40000))
    port_taken "$candidate" && continue
    POSTHORN_LISTEN="127.0.0.1:$candidate" \
        POSTHORN_STORE="$store_url" \
        POSTHORN_ADMIN_TOKEN=bench \
        POSTHORN_TRANSPORT="file:$tmp/outbox" \
        POSTHORN_DATA_DIR="$tmp/data" \
        POSTHORN_PUBLIC_URL="http://127.0.0.1:$candidate" \
        POSTHORN_WEBHOOK_ALLOW_PRIVATE=true \
        POSTHORN_WEBHOOK_ALLOW_HOSTS=127.0.0.1 \
        RUST_LOG=warn \
        "$server_bin" >"$tmp/server.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 300); do
        if healthy "$candidate"; then
            port="$candidate"
            break
        fi
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    [[ -n "$port" ]] && break
    # Lost a race for the port, or the server failed: show why and try another port.
    echo "posthorn did not come up on port $candidate:" >&2
    tail -n 20 "$tmp/server.log" >&2 || true
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
done
if [[ -z "$port" ]]; then
    echo "could not start posthorn" >&2
    exit 1
fi
echo "posthorn (pid $server_pid) is up on 127.0.0.1:$port" >&2

# CPU accounting: busy ticks of the whole machine and of the server over the bench run.
machine_busy() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
server_ticks() { awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$server_pid/stat" 2>/dev/null || echo 0; }
# The postmaster's CPU, its reaped children's, and its living children's (the backends).
db_ticks() {
    [[ -n "$db_pid" ]] || { echo 0; return; }
    cat /proc/[0-9]*/stat 2>/dev/null | awk -v pm="$db_pid" '{
        pid = $1; sub(/^.*\) /, "");
        if (pid == pm) t += $12 + $13 + $14 + $15; else if ($2 == pm) t += $12 + $13
    } END { print t + 0 }'
}
hz="$(getconf CLK_TCK 2>/dev/null || echo 100)"
cores="$(nproc 2>/dev/null || echo 1)"
machine_0="$(machine_busy)"
server_0="$(server_ticks)"
db_0="$(db_ticks)"
started="$(date +%s.%N)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

status=0
bench_env=(POSTHORN_BENCH_URL="http://127.0.0.1:$port" POSTHORN_BENCH_ADMIN_TOKEN=bench
    POSTHORN_BENCH_SERVER_PID="$server_pid")
if [[ -n "$db_pid" ]]; then
    bench_env+=(POSTHORN_BENCH_DB_PID="$db_pid")
fi
if [[ "${POSTHORN_BENCH_LOAD:-}" == wrk ]]; then
    bash "$root/bench/wrk/load.sh" "http://127.0.0.1:$port" bench "${pass[@]}" |
        tee "$tmp/bench.out" || status=$?
else
    env "${bench_env[@]}" "$bench_bin" "${pass[@]}" | tee "$tmp/bench.out" || status=$?
fi

machine_1="$(machine_busy)"
server_1="$(server_ticks)"
db_1="$(db_ticks)"
finished="$(date +%s.%N)"
bench_cpu="$(sed -n 's/^- load generator CPU time: \([0-9.]*\) s$/\1/p' "$tmp/bench.out")"
awk -v hz="$hz" -v cores="$cores" -v m0="$machine_0" -v m1="$machine_1" \
    -v s0="$server_0" -v s1="$server_1" -v d0="$db_0" -v d1="$db_1" -v has_db="${db_pid:+1}" \
    -v t0="$started" -v t1="$finished" -v b="${bench_cpu:-0}" 'BEGIN {
        wall = t1 - t0; machine = (m1 - m0) / hz; server = (s1 - s0) / hz; db = (d1 - d0) / hz;
        other = machine - server - b - db; if (other < 0) other = 0;
        dbpart = has_db ? sprintf(", PostgreSQL %.1f s", db) : "";
        printf "- CPU over the whole run (%.0f s wall, %d cores = %.0f core-s): server %.1f s, load generator %.1f s%s, other processes %.1f s\n",
            wall, cores, wall * cores, server, b, dbpart, other
    }'
if kill -0 "$server_pid" 2>/dev/null; then
    peak_kb="$(awk '/^VmHWM:/ {print $2}' "/proc/$server_pid/status" 2>/dev/null || true)"
    if [[ -n "$peak_kb" ]]; then
        printf -- '- server peak resident memory (VmHWM): %d MiB (%d kB)\n' $((peak_kb / 1024)) "$peak_kb"
    fi
    if [[ -d "$tmp/outbox" ]]; then
        printf -- '- messages written to the outbox: %d\n' "$(find "$tmp/outbox" -type f | wc -l)"
    fi
else
    echo "posthorn exited during the benchmark; last log lines:" >&2
    tail -n 40 "$tmp/server.log" >&2 || true
    status=1
fi
if grep -qiE 'error|panic' "$tmp/server.log"; then
    echo "server log has errors (first lines):" >&2
    grep -iE 'error|panic' "$tmp/server.log" | head -n 10 >&2
fi

if [[ "$store" == postgres && "$status" == 0 && "${POSTHORN_BENCH_SKIP_CEILING:-0}" != 1 ]]; then
    stop_server
    # The closed-loop rates of the table, for the ratios.
    rate_of() {
        awk -F'|' -v name="$1" '{
            n = $2; gsub(/^ +| +$/, "", n); l = $3;
            if (n == name && l ~ /closed/) { r = $4; gsub(/ /, "", r); print r; exit }
        }' "$tmp/bench.out"
    }
    POSTHORN_BENCH_DATABASE_URL="$admin_url" \
        POSTHORN_BENCH_HTTP_TRACK="$(rate_of "POST /v1/track")" \
        POSTHORN_BENCH_HTTP_SEND="$(rate_of "POST /v1/send")" \
        bash "$root/bench/pgbench-ceiling.sh" || status=$?
fi
exit "$status"
