#!/usr/bin/env bash
# Messages per second through the SMTP submission relay and the inbound MX against
# `POST /v1/send`, on one store (memory by default; `--store sqlite` for a fresh SQLite
# file). Builds in release mode, then for each path starts a fresh `posthorn` on free
# loopback ports with both SMTP listeners, runs `posthorn-smtp-bench --path <path>` and stops
# the server: each path is measured with an empty queue, not while the deliveries the
# previous path queued are worked off. Prints the three rates and their ratios to
# `/v1/send`. Other arguments go to `posthorn-smtp-bench` (`--connections`, `--duration`,
# `--size`).
#
#   bash bench/smtp.sh
#   bash bench/smtp.sh --store sqlite --connections 8 --duration 20
#
# POSTHORN_BENCH_SKIP_BUILD=1 uses the release binaries already built.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
store=memory
pass=()
while (($#)); do
    case "$1" in
        --store) store="${2:-}"; shift $(($# > 1 ? 2 : 1)) ;;
        --store=*) store="${1#--store=}"; shift ;;
        *) pass+=("$1"); shift ;;
    esac
done
if [[ "${POSTHORN_BENCH_SKIP_BUILD:-0}" != 1 ]]; then
    cargo build --release -p posthorn-server -p posthorn-bench
fi
target_dir="${CARGO_TARGET_DIR:-$root/target}"
tmp="$(mktemp -d -t posthorn-smtp-bench.XXXXXX)"
server_pid=""
stop_server() {
    if [[ -n "$server_pid" ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
    fi
}
cleanup() {
    stop_server
    rm -rf "$tmp"
}
trap cleanup EXIT
[[ "$store" == memory || "$store" == sqlite ]] || { echo "--store must be memory or sqlite" >&2; exit 2; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Starts a fresh server in "$tmp/$1"; sets http_port, sub_port, mx_port and server_pid.
start_server() {
    local dir="$tmp/$1" store_url=memory
    mkdir -p "$dir"
    [[ "$store" == sqlite ]] && store_url="sqlite:$dir/data/posthorn.db"
    http_port="$(free_port)"; sub_port="$(free_port)"; mx_port="$(free_port)"
    POSTHORN_LISTEN="127.0.0.1:$http_port" \
        POSTHORN_STORE="$store_url" \
        POSTHORN_ADMIN_TOKEN=bench \
        POSTHORN_TRANSPORT="file:$dir/outbox" \
        POSTHORN_DATA_DIR="$dir/data" \
        POSTHORN_SMTP_SUBMISSION_LISTEN="127.0.0.1:$sub_port" \
        POSTHORN_SMTP_INBOUND_LISTEN="127.0.0.1:$mx_port" \
        POSTHORN_INBOUND_SENDER_RATE=1000000 \
        POSTHORN_SMTP_MAX_CONNECTIONS_PER_CLIENT=100000 \
        POSTHORN_INBOUND_WORKSPACE_RATE=100000000 \
        RUST_LOG=warn \
        "$target_dir/release/posthorn" >"$dir/server.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 100); do
        if curl -fsS "http://127.0.0.1:$http_port/health" >/dev/null 2>&1; then return 0; fi
        sleep 0.2
    done
    echo "the server did not start; its log:" >&2
    cat "$dir/server.log" >&2
    exit 1
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores" >&2
declare -A rate
for path in send relay mx; do
    start_server "$path"
    out="$("$target_dir/release/posthorn-smtp-bench" \
        --url "http://127.0.0.1:$http_port" --admin-token bench \
        --submission "127.0.0.1:$sub_port" --inbound "127.0.0.1:$mx_port" \
        --path "$path" "${pass[@]}")"
    stop_server
    rate[$path]="$(awk '/^rate: /{print $3}' <<<"$out")"
    echo "$path: ${rate[$path]} messages/s (fresh server, store $store)" >&2
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo
echo "| path | messages/s | vs /v1/send |"
echo "|---|---:|---:|"
for path in send relay mx; do
    case "$path" in
        send) label="POST /v1/send" ;;
        relay) label="SMTP submission relay" ;;
        mx) label="SMTP inbound MX" ;;
    esac
    awk -v l="$label" -v r="${rate[$path]}" -v h="${rate[send]}" \
        'BEGIN { printf "| %s | %.0f | %.2f |\n", l, r, (h > 0 ? r / h : 0) }'
done
