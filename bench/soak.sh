#!/usr/bin/env bash
# The soak benchmark (not part of CI): `posthorn` on PostgreSQL (or the store given) under
# mixed traffic at a fixed rate for 10 minutes (track, send with delivery, contact reads, a
# campaign to the seeded contacts), sampled every 10 s: RSS, p99, failures. Writes the CSV
# and a PNG next to each other and prints the verdict.
#
#   eval "$(bash scripts/services.sh start)"
#   bash bench/soak.sh                      # bench/results/soak-<date>.{csv,png}
#   SOAK_SECS=120 SOAK_RATE=300 bash bench/soak.sh --store sqlite
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
store=postgres
if [[ "${1:-}" == "--store" && -n "${2:-}" ]]; then
    store="$2"
fi
out_dir="$root/bench/results"
mkdir -p "$out_dir"
stamp="$(date -u +%Y%m%dT%H%MZ)"
csv="$out_dir/soak-$store-$stamp.csv"
png="$out_dir/soak-$store-$stamp.png"

POSTHORN_BENCH_SKIP_CEILING=1 bash bench/run.sh --store "$store" \
    --scenarios soak \
    --contacts "${SOAK_CONTACTS:-3000}" \
    --connections "${SOAK_CONNECTIONS:-32}" \
    --soak-secs "${SOAK_SECS:-600}" \
    --soak-window "${SOAK_WINDOW:-10}" \
    --soak-rate "${SOAK_RATE:-400}" \
    --soak-csv "$csv"

if ! python3 -c 'import matplotlib' 2>/dev/null; then
    python3 -m pip install --quiet matplotlib==3.9.2
fi
python3 bench/plot_soak.py "$csv" "$png" "Posthorn soak on $store, $(date -u +%F) (load avg $(cut -d' ' -f1-3 /proc/loadavg))"
echo "samples: $csv"
echo "plot:    $png"
