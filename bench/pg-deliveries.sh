#!/usr/bin/env bash
# What a delivery costs on PostgreSQL, measured alone: a `POSTHORN_ROLE=api` server accepts
# `/v1/send` for a while (a backlog of delivery jobs), stops, and a `POSTHORN_ROLE=worker`
# server delivers that backlog into a file outbox; the script measures the worker's
# deliveries a second and the CPU the worker and PostgreSQL spend per delivery.
#
#   eval "$(bash bench/pg-durable.sh start)"
#   bash bench/pg-deliveries.sh                   # 5 s of sends, then 8 s of deliveries
#   POSTHORN_BENCH_SEND_SECONDS=8 POSTHORN_BENCH_DELIVER_SECONDS=10 bash bench/pg-deliveries.sh
#
# Needs the release binaries (`cargo build --release -p posthorn-server -p posthorn-bench`)
# and the PostgreSQL server of POSTHORN_BENCH_DATABASE_URL on this machine (its postmaster's
# CPU is read from /proc). A database is created for the run and dropped at the end. When
# the server has pg_stat_statements loaded, the statements of the delivery window are
# printed too. POSTHORN_WORKER_CONCURRENCY is passed on to the worker.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
admin_url="${POSTHORN_BENCH_DATABASE_URL:?eval \"\$(bash bench/pg-durable.sh start)\" first}"
server_bin="$root/target/release/posthorn"
bench_bin="$root/target/release/posthorn-bench"
send_seconds="${POSTHORN_BENCH_SEND_SECONDS:-5}"
deliver_seconds="${POSTHORN_BENCH_DELIVER_SECONDS:-8}"
for bin in "$server_bin" "$bench_bin"; do
    [[ -x "$bin" ]] || { echo "no $bin: build the release binaries first" >&2; exit 1; }
done

db="posthorn_deliveries_$$"
store_url="${admin_url%/*}/$db"
tmp="$(mktemp -d)"
port=$((20000 + RANDOM % 40000))
server_pid=""

cleanup() {
    [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    psql "$admin_url" -qAt -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

psql "$admin_url" -qAt -v ON_ERROR_STOP=1 -c "CREATE DATABASE \"$db\"" >/dev/null
data_dir="$(psql "$admin_url" -qAt -c 'SHOW data_directory')"
postmaster="$(head -n 1 "$data_dir/postmaster.pid")"
has_statements="$(psql "$admin_url" -qAt -c \
    "SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_statements'")"

# CPU ticks (user + system) of one process, and of the postmaster with its children.
ticks() { awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$1/stat" 2>/dev/null || echo 0; }
db_ticks() {
    local sum=0 pid
    for pid in "$postmaster" $(pgrep -P "$postmaster"); do sum=$((sum + $(ticks "$pid"))); done
    echo "$sum"
}
outbox_count() { find "$tmp/outbox" -maxdepth 1 -name '*.eml' 2>/dev/null | wc -l; }

start_server() {
    POSTHORN_LISTEN="127.0.0.1:$port" POSTHORN_STORE="$store_url" POSTHORN_ADMIN_TOKEN=bench \
        POSTHORN_TRANSPORT="file:$tmp/outbox" POSTHORN_DATA_DIR="$tmp/data" \
        POSTHORN_PUBLIC_URL="http://127.0.0.1:$port" RUST_LOG=warn POSTHORN_ROLE="$1" \
        "$server_bin" >"$tmp/server-$1.log" 2>&1 &
    server_pid=$!
}
stop_server() {
    kill "$server_pid"
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}

start_server api
for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
    sleep 0.1
done
echo "accepting /v1/send for $send_seconds s (POSTHORN_ROLE=api) ..." >&2
POSTHORN_BENCH_URL="http://127.0.0.1:$port" "$bench_bin" --scenarios send \
    --duration "$send_seconds" --contacts 1000 >"$tmp/bench.txt" 2>&1
stop_server
backlog="$(psql "$store_url" -qAt -c 'SELECT count(*) FROM jobs')"
echo "backlog: $backlog jobs" >&2

start_server worker
sleep 2 # connections opened, the first claims made
[[ "$has_statements" == 1 ]] && psql "$admin_url" -qAt -c 'SELECT pg_stat_statements_reset()' >/dev/null
delivered0="$(outbox_count)"
server0="$(ticks "$server_pid")"
db0="$(db_ticks)"
sleep "$deliver_seconds"
delivered=$(($(outbox_count) - delivered0))
server_used=$(($(ticks "$server_pid") - server0))
db_used=$(($(db_ticks) - db0))
stop_server

if ((delivered == 0)); then
    echo "nothing was delivered; the worker's log:" >&2
    tail -n 20 "$tmp/server-worker.log" >&2
    exit 1
fi
tick_us=$((1000000 / $(getconf CLK_TCK)))
echo "deliveries alone over $deliver_seconds s: $delivered ($((delivered / deliver_seconds))/s);" \
    "server CPU $((server_used * tick_us / delivered)) µs per delivery;" \
    "PostgreSQL CPU $((db_used * tick_us / delivered)) µs per delivery"
if [[ "$has_statements" == 1 ]]; then
    psql "$admin_url" -c "SELECT calls, plans, round(total_plan_time::numeric) AS plan_ms, \
        round(total_exec_time::numeric) AS exec_ms, rows, \
        left(regexp_replace(query, '\s+', ' ', 'g'), 80) AS statement \
        FROM pg_stat_statements WHERE calls > 10 \
        ORDER BY total_plan_time + total_exec_time DESC LIMIT 12"
fi
