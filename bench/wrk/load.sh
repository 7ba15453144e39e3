#!/usr/bin/env bash
# The load of `bench/run.sh` from wrk instead of posthorn-bench (POSTHORN_BENCH_LOAD=wrk):
# the tool issue #14 measured item 1 with. Scenarios `health`, `track-fresh` and `track`
# (100,000 recurring contacts) only, a closed loop of `--connections` connections on 2
# threads for `--duration` seconds each.
#
#   POSTHORN_BENCH_LOAD=wrk bash bench/run.sh --scenarios health,track-fresh --duration 8
#
# Called by run.sh with the server's base URL and admin token; needs wrk (Debian package
# `wrk`) and curl.
set -euo pipefail

base="$1"
admin_token="$2"
shift 2
scenarios=health,track-fresh
duration=8
connections=64
while (($#)); do
    case "$1" in
        --scenarios) scenarios="$2"; shift 2 ;;
        --duration) duration="$2"; shift 2 ;;
        --connections) connections="$2"; shift 2 ;;
        *) echo "wrk load: $1 is not supported" >&2; exit 2 ;;
    esac
done
command -v wrk >/dev/null || { echo "wrk load: needs wrk (apt-get install wrk)" >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

created="$(curl -fsS -X POST -H "Authorization: Bearer $admin_token" \
    -H "Content-Type: application/json" \
    -d '{"name":"wrk","rateLimitPerMinute":10000000,"sendRatePerSecond":100000}' \
    "$base/admin/workspaces")"
key="$(printf '%s' "$created" | python3 -c 'import json, sys; print(json.load(sys.stdin)["keySet"]["secretKey"])')"

# Runs wrk and prints one table row: name, req/s, p99 ms, non-2xx, share of the first row.
ceiling=""
row() {
    local name="$1"
    shift
    local out rate p99 non2xx
    out="$(wrk -t2 -c"$connections" -d"${duration}s" --latency "$@")"
    rate="$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")"
    p99="$(awk '$1 == "99%" {v = $2; if (v ~ /us$/) {sub(/us$/, "", v); v /= 1000} else if (v ~ /ms$/) sub(/ms$/, "", v); else if (v ~ /s$/) {sub(/s$/, "", v); v *= 1000}; print v}' <<<"$out")"
    non2xx="$(awk '/Non-2xx/ {print $NF}' <<<"$out")"
    ceiling="${ceiling:-$rate}"
    awk -v n="$name" -v r="$rate" -v p="$p99" -v e="${non2xx:-0}" -v c="$ceiling" \
        'BEGIN { printf "| %-32s | %11.0f | %6.2f | %7d | %8.1f %% |\n", n, r, p, e, 100 * r / c }'
}

echo "| scenario (wrk -t2 -c$connections -d${duration}s) | req/s (all) | p99 ms | non-2xx | vs first |"
echo "| -------------------------------- | ----------: | -----: | ------: | -------: |"
for scenario in ${scenarios//,/ }; do
    case "$scenario" in
        health) row "GET /health" "$base/health" ;;
        track-fresh)
            POSTHORN_WRK_KEY="$key" row "POST /v1/track, new contact each" \
                -s "$here/track.lua" "$base/v1/track"
            ;;
        track)
            POSTHORN_WRK_KEY="$key" POSTHORN_WRK_RECUR=100000 row "POST /v1/track" \
                -s "$here/track.lua" "$base/v1/track"
            ;;
        *) echo "wrk load: scenario $scenario is not supported" >&2; exit 2 ;;
    esac
done

# CPU of wrk (and of this script's other few children), for run.sh's CPU line. `times` runs
# in this shell (a pipe would run it in a subshell, which has no children).
cpu="$(mktemp)"
times >"$cpu"
awk 'NR == 2 {
    split($1, u, /[ms]/); split($2, s, /[ms]/);
    printf "- load generator CPU time: %.1f s\n", u[1] * 60 + u[2] + s[1] * 60 + s[2]
}' "$cpu"
rm -f "$cpu"
