#!/usr/bin/env bash
# The ceiling PostgreSQL itself gives for the writes of `POST /v1/track` and `POST /v1/send`:
# pgbench runs the statements one request makes (bench/pgbench/*.sql, listed there with
# where they come from) on a fresh, migrated database, with the load generator's shape
# (64 clients, request i of client c is c + 64 k).
#
#   POSTHORN_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:25432/postgres \
#       bash bench/pgbench-ceiling.sh
#
# `bench/run.sh --store postgres` runs this after the HTTP benchmark and passes the HTTP
# rates (POSTHORN_BENCH_HTTP_TRACK, POSTHORN_BENCH_HTTP_SEND, req/s) to print the ratios.
# POSTHORN_BENCH_DATABASE_URL overrides POSTHORN_TEST_DATABASE_URL (a superuser URL whose
# database is only used to create and drop the benchmark's own); POSTHORN_BENCH_PGBENCH_SECS
# sets the seconds per run (10). Needs psql, pgbench and target/release/posthorn (for
# `posthorn migrate`).
#
# Commits are durable by default (synchronous_commit=on for the benchmark's database);
# POSTHORN_BENCH_PG_SYNC=off measures without waiting for the WAL flush. The output names
# the configuration, NOT DURABLE when either that or the server's fsync is off.
# track-one.sql is the one-statement limit: a new contact and its event in one prepared
# statement per transaction.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
admin_url="${POSTHORN_BENCH_DATABASE_URL:-${POSTHORN_TEST_DATABASE_URL:-}}"
if [[ -z "$admin_url" ]]; then
    echo "set POSTHORN_TEST_DATABASE_URL (eval \"\$(bash scripts/services.sh env)\")" >&2
    exit 2
fi
secs="${POSTHORN_BENCH_PGBENCH_SECS:-10}"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
server_bin="$target_dir/release/posthorn"
pgbench="$(command -v pgbench || ls -d /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | sort -V | tail -1)"
if [[ -z "$pgbench" || ! -x "$pgbench" ]]; then
    echo "pgbench not found (Debian: postgresql-client or postgresql-contrib)" >&2
    exit 2
fi
command -v psql >/dev/null || { echo "psql not found" >&2; exit 2; }
[[ -x "$server_bin" ]] || { echo "$server_bin not built (cargo build --release -p posthorn-server)" >&2; exit 2; }

db="posthorn_bench_ceiling_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
url="${admin_url%/*}/$db"
tmp="$(mktemp -d -t posthorn-pgbench.XXXXXX)"
cleanup() {
    psql "$admin_url" -qAt -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

psql "$admin_url" -qAt -v ON_ERROR_STOP=1 -c "CREATE DATABASE \"$db\"" >/dev/null
# Durable by default: every commit waits for its WAL flush (synchronous_commit=on for this
# database, whatever the server's default). POSTHORN_BENCH_PG_SYNC=off measures without
# that wait, and the output says so. fsync is the server's own setting: a server running
# with fsync=off (the test configuration of scripts/services.sh) is never durable, and the
# output says that too.
sync_commit="${POSTHORN_BENCH_PG_SYNC:-on}"
case "$sync_commit" in
    on | off) ;;
    *) echo "POSTHORN_BENCH_PG_SYNC must be on or off" >&2; exit 2 ;;
esac
psql "$admin_url" -qAt -v ON_ERROR_STOP=1 \
    -c "ALTER DATABASE \"$db\" SET synchronous_commit = $sync_commit" >/dev/null
POSTHORN_STORE="$url" RUST_LOG=warn "$server_bin" migrate >"$tmp/migrate.log" 2>&1 || {
    cat "$tmp/migrate.log" >&2
    exit 1
}

# The postmaster, when PostgreSQL runs on this machine: its CPU and its backends'.
server_fsync="$(psql "$url" -qAt -c 'SHOW fsync')"
if [[ "$server_fsync" == on && "$sync_commit" == on ]]; then
    durability="durable: fsync=on, synchronous_commit=on"
else
    durability="NOT DURABLE: fsync=$server_fsync, synchronous_commit=$sync_commit"
fi
echo "pgbench ceiling on $durability" >&2

db_pid=""
data_dir="$(psql "$url" -qAt -c 'SHOW data_directory' 2>/dev/null || true)"
if [[ -n "$data_dir" && -r "$data_dir/postmaster.pid" ]]; then
    db_pid="$(head -n 1 "$data_dir/postmaster.pid")"
fi
db_ticks() {
    [[ -n "$db_pid" ]] || { echo 0; return; }
    local total=0 pid rest
    for stat in /proc/[0-9]*/stat; do
        pid="${stat#/proc/}"
        pid="${pid%/stat}"
        rest="$(cat "$stat" 2>/dev/null)" || continue
        rest="${rest##*) }"
        # Fields after the command: state ppid ... utime(12) stime(13) cutime(14) cstime(15).
        read -r -a f <<<"$rest"
        if [[ "$pid" == "$db_pid" ]]; then
            total=$((total + f[11] + f[12] + f[13] + f[14]))
        elif [[ "${f[1]}" == "$db_pid" ]]; then
            total=$((total + f[11] + f[12]))
        fi
    done
    echo "$total"
}
hz="$(getconf CLK_TCK 2>/dev/null || echo 100)"

ws="$(psql "$url" -qAt -c 'SELECT gen_random_uuid()::text')"
# The state the HTTP benchmark starts its scenarios from: its workspace, the verified
# domain and the 3000 seeded contacts; nothing else.
reset() {
    psql "$url" -qAt -v ON_ERROR_STOP=1 >/dev/null <<SQL
TRUNCATE contacts, events, emails, jobs;
INSERT INTO workspaces (id, name, disabled, active_contact_limit, rate_limit_per_minute,
                        send_rate_per_second, created_at, updated_at)
VALUES ('$ws', 'bench', false, NULL, 10000000, 100000, now(), now()) ON CONFLICT DO NOTHING;
INSERT INTO domains (workspace_id, id, domain, verified, inbound_enabled, created_at, updated_at,
                     verification_token, dkim_selector, verified_by_operator)
VALUES ('$ws', gen_random_uuid()::text, 'example.com', true, false, now(), now(),
        'posthorn-verification=bench', 'phbench', true)
ON CONFLICT DO NOTHING;
INSERT INTO contacts (workspace_id, id, email, subscribed, data, status, expires_at,
                      created_at, updated_at, version)
SELECT '$ws', gen_random_uuid()::text, 'seed' || i || '@bench.io', i % 3 <> 0,
       jsonb_build_object('name', 'Seed ' || i, 'plan', CASE WHEN i % 2 = 0 THEN 'pro' ELSE 'free' END),
       'ACTIVE', NULL, now(), now(), 0
  FROM generate_series(0, 2999) AS i;
ANALYZE;
SQL
}

rows=()
run=0
# run_one LABEL CLIENTS SCRIPT... : one pgbench run from the reset state.
run_one() {
    local label="$1" clients="$2"
    shift 2
    local files=()
    for script in "$@"; do files+=(-f "$root/bench/pgbench/$script"); done
    run=$((run + 1))
    reset
    local t0 t1 out
    t0="$(db_ticks)"
    if ! out="$("$pgbench" -n -c "$clients" -j 2 -T "$secs" -M prepared \
        -D ws="$ws" -D k=0 -D run="$run" "${files[@]}" "$url" 2>&1)"; then
        echo "$out" >&2
        echo "pgbench failed: $label" >&2
        exit 1
    fi
    t1="$(db_ticks)"
    echo "$out" >"$tmp/run$run.out"
    if grep -q "aborted" <<<"$out"; then
        echo "$out" | grep -m 5 -i "abort\|error" >&2
    fi
    local tps lat processed failed first_tps
    tps="$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' <<<"$out")"
    lat="$(sed -n 's/^latency average = \([0-9.]*\) ms$/\1/p' <<<"$out")"
    processed="$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")"
    failed="$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")"
    # With several scripts, the rate of the first one (send.sql) is what requests map to.
    first_tps="$(awk '/^SQL script 1:/ {s = 1} s && /tps = / {sub(/.*tps = /, ""); sub(/\).*/, ""); print; exit}' <<<"$out")"
    local rate="${first_tps:-$tps}"
    local cpu_us="-"
    if [[ -n "$db_pid" && "${processed:-0}" -gt 0 ]]; then
        cpu_us="$(awk -v t="$((t1 - t0))" -v hz="$hz" -v n="$processed" -v s="$#" \
            'BEGIN { printf "%.0f", t / hz * 1e6 / n * s }')"
    fi
    rows+=("$label|$clients|$rate|$lat|${failed:-0}|$cpu_us")
    echo "pgbench $label, $clients clients: $rate/s" >&2
}

run_one "track.sql" 64 track.sql
run_one "track.sql" 16 track.sql
run_one "track-one.sql, one statement" 64 track-one.sql
run_one "track-one.sql, one statement" 16 track-one.sql
run_one "send.sql" 64 send.sql
run_one "send.sql" 16 send.sql
run_one "send.sql + deliver.sql, 1:1" 64 send.sql deliver.sql

echo
echo "PostgreSQL ceiling (pgbench -n -c N -j 2 -T $secs -M prepared, from the HTTP benchmark's starting state; $durability):"
echo
printf '| %-28s | %7s | %12s | %14s | %6s | %15s | %11s | %13s |\n' \
    "pgbench script" "clients" "requests/s" "latency avg ms" "failed" "db CPU µs/req" "HTTP req/s" "HTTP / ceiling"
printf '| %s | %s: | %s: | %s: | %s: | %s: | %s: | %s: |\n' \
    "$(printf -- '-%.0s' {1..28})" "------" "-----------" "-------------" "-----" "--------------" "----------" "------------"
for row in "${rows[@]}"; do
    IFS='|' read -r label clients rate lat failed cpu <<<"$row"
    http="-"
    case "$label" in
        track*.sql*) http="${POSTHORN_BENCH_HTTP_TRACK:--}" ;;
        send.sql*) http="${POSTHORN_BENCH_HTTP_SEND:--}" ;;
    esac
    ratio="-"
    if [[ "$http" != "-" ]]; then
        ratio="$(awk -v h="$http" -v c="$rate" 'BEGIN { if (c > 0) printf "%.1f %%", 100 * h / c; else print "-" }')"
    fi
    printf '| %-28s | %7s | %12.0f | %14s | %6s | %15s | %11s | %13s |\n' \
        "$label" "$clients" "$rate" "$lat" "$failed" "$cpu" "$http" "$ratio"
done
echo
echo "- requests/s: transactions per second of the (first) script; with deliver.sql mixed in, the send.sql rate"
echo "- db CPU µs/req: CPU of the PostgreSQL server (postmaster and backends) per request over the run${db_pid:+ (postmaster $db_pid)}"
