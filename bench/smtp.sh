#!/usr/bin/env bash
# Messages per second through the SMTP submission relay and the inbound MX against
# `POST /v1/send`, on one server and one store (memory by default; `--store sqlite` for a
# fresh SQLite file). Builds in release mode, starts `posthorn` on free loopback ports with
# both SMTP listeners, runs `posthorn-smtp-bench` and always stops the server. Other
# arguments go to `posthorn-smtp-bench` (`--connections`, `--duration`, `--size`).
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
cleanup() {
    [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
case "$store" in
    memory) store_url=memory ;;
    sqlite) store_url="sqlite:$tmp/data/posthorn.db" ;;
    *) echo "--store must be memory or sqlite" >&2; exit 2 ;;
esac
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
http_port="$(free_port)"; sub_port="$(free_port)"; mx_port="$(free_port)"
POSTHORN_LISTEN="127.0.0.1:$http_port" \
    POSTHORN_STORE="$store_url" \
    POSTHORN_ADMIN_TOKEN=bench \
    POSTHORN_TRANSPORT="file:$tmp/outbox" \
    POSTHORN_DATA_DIR="$tmp/data" \
    POSTHORN_SMTP_SUBMISSION_LISTEN="127.0.0.1:$sub_port" \
    POSTHORN_SMTP_INBOUND_LISTEN="127.0.0.1:$mx_port" \
    POSTHORN_INBOUND_SENDER_RATE=1000000 \
    POSTHORN_INBOUND_WORKSPACE_RATE=100000000 \
    RUST_LOG=warn \
    "$target_dir/release/posthorn" >"$tmp/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
    if curl -fsS "http://127.0.0.1:$http_port/health" >/dev/null 2>&1; then break; fi
    sleep 0.2
done
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores" >&2
"$target_dir/release/posthorn-smtp-bench" \
    --url "http://127.0.0.1:$http_port" --admin-token bench \
    --submission "127.0.0.1:$sub_port" --inbound "127.0.0.1:$mx_port" "${pass[@]}"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
