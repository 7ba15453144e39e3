#!/usr/bin/env bash
# Fuzzes the HTTP API against its own OpenAPI document with schemathesis (`--checks all`):
# builds and starts `posthorn` on loopback with a SQLite store in a temporary directory,
# creates a workspace and its keys through the operator API, and runs schemathesis on every
# operation (workspace API with the secret key, operator API with the admin token, key
# revocation last as it can revoke the key in use). Well-formed `Idempotency-Key`s are made
# unique per request (scripts/fuzz_hooks.py). Prints a summary; exits non-zero when a check
# failed.
#
# Usage: scripts/fuzz-api.sh [MAX_EXAMPLES]     (default 40 examples per operation)
# Environment: FUZZ_PORT (default 18089), FUZZ_KEEP=1 keeps the temporary directory.
# Needs the network once, for `pip install schemathesis` when it is missing; not run in CI.
# Strings are generated without NUL characters: the server refuses U+0000 anywhere in a JSON
# body (422 `invalid_characters`, docs/api.md), free-form `data` and ignored extra properties
# included, which a schema cannot say for free-form values.

set -euo pipefail

MAX_EXAMPLES="${1:-40}"
PORT="${FUZZ_PORT:-18089}"
BASE="http://127.0.0.1:${PORT}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d -t posthorn-fuzz.XXXXXX)"
ADMIN_TOKEN="fuzz-admin-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
SERVER_PID=""

cleanup() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [[ "${FUZZ_KEEP:-0}" != "1" ]]; then
        rm -rf "$WORK"
    else
        echo "kept $WORK"
    fi
}
trap cleanup EXIT

if ! command -v schemathesis >/dev/null 2>&1; then
    echo "== installing schemathesis with pip"
    python3 -m pip install --quiet schemathesis
fi
echo "== $(schemathesis --version)"

echo "== building posthorn"
(cd "$ROOT" && cargo build --quiet -p posthorn-server --bin posthorn)
BIN="$ROOT/target/debug/posthorn"

echo "== starting posthorn on $BASE (SQLite in $WORK)"
POSTHORN_LISTEN="127.0.0.1:${PORT}" \
    POSTHORN_STORE="sqlite:${WORK}/posthorn.db" \
    POSTHORN_DATA_DIR="$WORK" \
    POSTHORN_TRANSPORT="file:${WORK}/outbox" \
    POSTHORN_ADMIN_TOKEN="$ADMIN_TOKEN" \
    POSTHORN_PUBLIC_URL="$BASE" \
    POSTHORN_DNS_TIMEOUT_MS=200 \
    RUST_LOG=warn \
    "$BIN" >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do
    curl -fsS "$BASE/health" >/dev/null 2>&1 && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log"; exit 1; }
    sleep 0.2
done
curl -fsS "$BASE/health" >/dev/null

echo "== creating a workspace and its keys"
created="$(curl -fsS -X POST "$BASE/admin/workspaces" \
    -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
    -d '{"name": "Fuzz", "rateLimitPerMinute": 10000000}')"
WORKSPACE="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["workspace"]["id"])' <<<"$created")"
SECRET="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["keySet"]["secretKey"])' <<<"$created")"
# The senders of the document's examples, so that those requests get through.
for domain in example.com acme.com; do
    curl -fsS -X POST "$BASE/admin/workspaces/$WORKSPACE/domains" \
        -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
        -d "{\"domain\": \"$domain\", \"verified\": true}" >/dev/null
done

# One schemathesis run; its report goes to $WORK/NAME.txt and the summary is kept.
RESULTS=()
FAILED=0
run() {
    local name="$1" token="$2"
    shift 2
    echo "== schemathesis: $name"
    local status=0
    # From the temporary directory: schemathesis keeps a cache in `.schemathesis/`.
    (cd "$WORK" && PYTHONPATH="$ROOT/scripts${PYTHONPATH:+:$PYTHONPATH}" \
        SCHEMATHESIS_HOOKS=fuzz_hooks schemathesis run "$BASE/openapi.json" \
        --url "$BASE" \
        --checks all \
        --max-examples "$MAX_EXAMPLES" \
        --header "Authorization: Bearer $token" \
        --seed 20261123 \
        --generation-allow-x00 false \
        --no-color \
        "$@") 2>&1 | tee "$WORK/$name.txt" || status=$?
    RESULTS+=("$name: exit $status; $(grep -E '^ +[0-9]+ generated' "$WORK/$name.txt" | tail -1 | sed 's/^ *//'); operations $(grep -E '^ +Tested:' "$WORK/$name.txt" | tail -1 | sed 's/^ *Tested: *//')")
    if [[ $status -ne 0 ]]; then FAILED=1; fi
}

run workspace "$SECRET" --exclude-path-regex '^/admin' \
    --exclude-operation-id revokeKeySet
run operator "$ADMIN_TOKEN" --include-path-regex '^/admin'
run revoke "$SECRET" --include-operation-id revokeKeySet

echo
echo "== summary (max $MAX_EXAMPLES examples per operation)"
for line in "${RESULTS[@]}"; do
    echo "   $line"
done
if grep -q "panicked" "$WORK/server.log"; then
    echo "   the server logged a panic:"
    grep -m5 "panicked" "$WORK/server.log"
    FAILED=1
fi
exit "$FAILED"
