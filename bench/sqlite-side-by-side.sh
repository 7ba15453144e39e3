#!/usr/bin/env bash
# The SQLite figures of docs/performance.md, side by side in one run: SQLite's own limit
# (`posthorn-sqlite-ceiling`: one INSERT per commit, and a track's contact + event) with
# synchronous=full and normal, then the HTTP benchmark on the memory store, on SQLite with
# synchronous=full and with synchronous=normal. Each step is preceded by the machine's load
# average (the machine may be shared: read every figure next to it). Repeats it all
# POSTHORN_BENCH_ROUNDS times (default 1).
#
#   bash bench/sqlite-side-by-side.sh                       # health,track-fresh,track,send
#   bash bench/sqlite-side-by-side.sh --scenarios health,track-fresh --duration 5
#
# Arguments are passed to posthorn-bench (through bench/run.sh). The databases live in the
# system's temporary directory, the disk under test for both the ceiling and the server.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

args=("$@")
if ((${#args[@]} == 0)); then
    args=(--scenarios health,track-fresh,track,send)
fi

if [[ "${POSTHORN_BENCH_SKIP_BUILD:-0}" != 1 ]]; then
    cargo build --release -p posthorn-server -p posthorn-bench
fi
ceiling="${CARGO_TARGET_DIR:-$root/target}/release/posthorn-sqlite-ceiling"

load() {
    echo "== $1 (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
}

for round in $(seq "${POSTHORN_BENCH_ROUNDS:-1}"); do
    echo "==== round $round, $(date -u +%FT%TZ)"
    for sync in full normal; do
        load "SQLite ceiling, synchronous=$sync"
        "$ceiling" --synchronous "$sync" --duration "${POSTHORN_BENCH_CEILING_SECS:-5}"
    done
    load "HTTP, memory store"
    POSTHORN_BENCH_SKIP_BUILD=1 bash bench/run.sh --store memory "${args[@]}"
    for sync in full normal; do
        load "HTTP, SQLite synchronous=$sync"
        POSTHORN_SQLITE_SYNCHRONOUS="$sync" POSTHORN_BENCH_SKIP_BUILD=1 \
            bash bench/run.sh --store sqlite "${args[@]}"
    done
    load "end of round $round"
done
