#!/usr/bin/env bash
# Fuzzes the HTTP API against its own OpenAPI document with schemathesis (`--checks all`,
# every phase: examples, coverage, fuzzing and the stateful phase that follows the document's
# links), with a fixed seed. Starts `posthorn` on loopback with the memory store, and keeps
# everything it could send out on this machine: mail goes to the file transport in a
# temporary directory, WEBHOOK steps may reach only a receiver on 127.0.0.1
# (`POSTHORN_WEBHOOK_ALLOW_HOSTS`, private ranges refused), and every DNS lookup goes to a stub
# resolver on 127.0.0.1 (`POSTHORN_DNS_SERVERS`; scripts/fuzz_loopback.py, which logs each
# query). Creates a workspace and its keys through the operator API, then runs schemathesis
# on every operation (workspace API with the secret key, operator API with the admin token,
# key revocation last as it can revoke the key in use). Well-formed `Idempotency-Key`s are
# made unique per request (scripts/fuzz_hooks.py). Prints a summary; exits non-zero on any
# finding, a panic in the server log, or when no lookup reached the stub resolver.
#
# Usage: scripts/fuzz-api.sh [MAX_EXAMPLES]     (default 40 examples per operation in the
# fuzzing phase, and 5 times as many stateful scenarios of up to 10 steps)
# Environment: FUZZ_PORT (default 18089); FUZZ_BIN, a built `posthorn` to use instead of
# building one (CI passes the debug build its tests made); FUZZ_KEEP=1 keeps the temporary
# directory (server log, resolver and receiver logs, each run's report); FUZZ_WORKERS
# (default 1), schemathesis workers; FUZZ_SCENARIOS, stateful scenarios per run; FUZZ_SEED,
# another seed than the fixed one (to look for findings the fixed seed does not reach).
# schemathesis is pinned (SCHEMATHESIS_VERSION); when that version is not the installed
# one, pip installs it once into ~/.cache/posthorn (needs the network that once).
# Strings are generated without NUL characters: the server refuses U+0000 anywhere in a JSON
# body (422 `invalid_characters`, docs/api.md), free-form `data` and ignored extra properties
# included, which a schema cannot say for free-form values.

set -euo pipefail

SCHEMATHESIS_VERSION="4.32.5"
SEED="${FUZZ_SEED:-20261123}"
MAX_EXAMPLES="${1:-40}"
STATEFUL_SCENARIOS="${FUZZ_SCENARIOS:-$((MAX_EXAMPLES * 5))}"
PORT="${FUZZ_PORT:-18089}"
# One worker by default: with two, hypothesis's lambda descriptions call `ast.parse` from two
# threads at once, which CPython 3.11 does not survive ("AST constructor recursion depth
# mismatch", reported as a schemathesis Runtime Error in CI).
WORKERS="${FUZZ_WORKERS:-1}"
BASE="http://127.0.0.1:${PORT}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d -t posthorn-fuzz.XXXXXX)"
ADMIN_TOKEN="fuzz-admin-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
SERVER_PID=""
SINKS_PID=""
STARTED=$SECONDS

cleanup() {
    for pid in "$SERVER_PID" "$SINKS_PID"; do
        if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    if [[ "${FUZZ_KEEP:-0}" != "1" ]]; then
        rm -rf "$WORK"
    else
        echo "kept $WORK"
    fi
}
trap cleanup EXIT

# schemathesis, the pinned version: the installed one if it is that, else a private copy.
PY_PATH="$ROOT/scripts"
installed="$(python3 -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null || true)"
if [[ "$installed" != "$SCHEMATHESIS_VERSION" ]]; then
    TOOLS="${XDG_CACHE_HOME:-$HOME/.cache}/posthorn/schemathesis-$SCHEMATHESIS_VERSION"
    if [[ ! -f "$TOOLS/.complete" ]]; then
        echo "== installing schemathesis $SCHEMATHESIS_VERSION into $TOOLS"
        rm -rf "$TOOLS"
        # `--target` installs beside the system's packages, which Debian's pip allows.
        python3 -m pip install --quiet --disable-pip-version-check --target "$TOOLS" \
            "schemathesis==$SCHEMATHESIS_VERSION"
        touch "$TOOLS/.complete"
    fi
    PY_PATH="$PY_PATH:$TOOLS"
fi
schemathesis() {
    PYTHONPATH="$PY_PATH${PYTHONPATH:+:$PYTHONPATH}" python3 -m schemathesis.cli "$@"
}
echo "== $(schemathesis --version)"

if [[ -n "${FUZZ_BIN:-}" ]]; then
    BIN="$FUZZ_BIN"
    [[ -x "$BIN" ]] || { echo "FUZZ_BIN=$BIN is not an executable" >&2; exit 1; }
else
    echo "== building posthorn"
    (cd "$ROOT" && cargo build --quiet -p posthorn-server --bin posthorn)
    BIN="$ROOT/target/debug/posthorn"
fi

echo "== starting the stub resolver and the webhook receiver on 127.0.0.1"
python3 "$ROOT/scripts/fuzz_loopback.py" "$WORK/sinks" >"$WORK/sinks.log" 2>&1 &
SINKS_PID=$!
for _ in $(seq 1 100); do
    [[ -f "$WORK/sinks" ]] && break
    kill -0 "$SINKS_PID" 2>/dev/null || { cat "$WORK/sinks.log"; exit 1; }
    sleep 0.1
done
DNS_PORT="$(sed -n 's/^dns=//p' "$WORK/sinks")"
HOOK_PORT="$(sed -n 's/^webhook=//p' "$WORK/sinks")"
echo "   DNS 127.0.0.1:$DNS_PORT, webhooks 127.0.0.1:$HOOK_PORT"

echo "== starting posthorn on $BASE (memory store, outbox in $WORK)"
POSTHORN_LISTEN="127.0.0.1:${PORT}" \
    POSTHORN_STORE="memory" \
    POSTHORN_DATA_DIR="$WORK" \
    POSTHORN_TRANSPORT="file:${WORK}/outbox" \
    POSTHORN_ADMIN_TOKEN="$ADMIN_TOKEN" \
    POSTHORN_PUBLIC_URL="$BASE" \
    POSTHORN_DNS_SERVERS="127.0.0.1:${DNS_PORT}" \
    POSTHORN_DNS_TIMEOUT_MS=500 \
    POSTHORN_WEBHOOK_ALLOW_HOSTS="127.0.0.1" \
    POSTHORN_WEBHOOK_ALLOW_PRIVATE=false \
    POSTHORN_WEBHOOK_RETRY_DELAYS="" \
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
# The senders of the document's examples, so that those requests get through; example.com
# also receives mail (`POST /inbound/raw`, scripts/fuzz_hooks.py).
for domain in example.com acme.com; do
    inbound=false
    [[ "$domain" == example.com ]] && inbound=true
    curl -fsS -X POST "$BASE/admin/workspaces/$WORKSPACE/domains" \
        -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
        -d "{\"domain\": \"$domain\", \"verified\": true, \"inboundEnabled\": $inbound}" >/dev/null
done

# The template that SEND_EMAIL steps send (scripts/fuzz_hooks.py).
template="$(curl -fsS -X POST "$BASE/templates" \
    -H "Authorization: Bearer $SECRET" -H 'Content-Type: application/json' \
    -d '{"name": "Fuzz", "type": "TRANSACTIONAL", "subject": "Hello {{contact.email}}", "body": "<p>Hi</p>", "from": "fuzz@example.com"}')"
TEMPLATE_ID="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' <<<"$template")"

# Examples per operation in the fuzzing phase (the coverage phase generates every case the
# schema defines whatever the budget), and stateful scenarios (chains of linked operations).
cat >"$WORK/schemathesis.toml" <<EOF
[phases.fuzzing.generation]
max-examples = $MAX_EXAMPLES

[phases.stateful]
max-steps = 10

# Chains follow the document's links (and Location headers) only: links guessed from field
# names hand one resource's values to another's parameters (a contact list's cursor to the
# template list, an empty string as a path id), refusals that say nothing about the API.
[phases.stateful.inference]
algorithms = ["location-headers"]

[phases.stateful.generation]
max-examples = $STATEFUL_SCENARIOS
EOF

# One schemathesis run; its report goes to $WORK/NAME.txt and the summary is kept.
RESULTS=()
FAILED=0
run() {
    local name="$1" token="$2"
    shift 2
    echo "== schemathesis: $name"
    local status=0
    # From the temporary directory: schemathesis keeps a cache in `.schemathesis/`.
    (cd "$WORK" && SCHEMATHESIS_HOOKS=fuzz_hooks FUZZ_WEBHOOK_URL="http://127.0.0.1:${HOOK_PORT}/hook" \
        FUZZ_TEMPLATE_ID="$TEMPLATE_ID" \
        schemathesis --config-file "$WORK/schemathesis.toml" run "$BASE/openapi.json" \
        --url "$BASE" \
        --checks all \
        --exclude-checks positive_data_acceptance,ensure_resource_availability \
        --header "Authorization: Bearer $token" \
        --seed "$SEED" \
        --workers "$WORKERS" \
        --generation-allow-x00 false \
        --generation-database none \
        --suppress-health-check filter_too_much \
        --no-color \
        "$@") 2>&1 | tee "$WORK/$name.txt" || status=$?
    local note=""
    if [[ $status -ne 0 ]] && generator_limits_only "$WORK/$name.txt"; then
        # Not a finding: schemathesis could not draw some (negative) cases from a schema
        # it transformed itself; every case it did draw passed.
        note=" (only schemathesis Schema Errors: generator limits, not findings)"
        status=0
    fi
    RESULTS+=("$name: exit $status$note; $(grep -E '^ +[0-9]+ generated' "$WORK/$name.txt" | tail -1 | sed 's/^ *//'); operations $(grep -E '^ +Tested:' "$WORK/$name.txt" | tail -1 | sed 's/^ *Tested: *//')")
    if [[ $status -ne 0 ]]; then FAILED=1; fi
}

# Whether a report's summary lists no failure and only "Schema Error"s: schemathesis saying
# it cannot generate from a schema (e.g. "a `not` whose complement is not spelled out", which
# its negative mutations of the condition schema can produce), not that the API misbehaved.
generator_limits_only() {
    python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
summary = text.rsplit("SUMMARY", 1)[-1]
if re.search(r"^Failures:", summary, re.M):
    sys.exit(1)
block = re.search(r"^Errors:\n((?:  .*\n)+)", summary, re.M)
if not block:
    sys.exit(1)
lines = [line.strip() for line in block.group(1).splitlines() if line.strip()]
sys.exit(0 if lines and all(re.search(r"Schema Error: \d+$", line) for line in lines) else 1)
PY
}

run workspace "$SECRET" --exclude-path-regex '^/admin' \
    --exclude-operation-id revokeKeySet
run operator "$ADMIN_TOKEN" --include-path-regex '^/admin'
# Key sets last: the stateful phase revokes the key sets it creates, the fuzzing phase tries
# revocation with generated ids.
run keys "$SECRET" --include-operation-id createKeySet --include-operation-id revokeKeySet

echo
echo "== summary ($MAX_EXAMPLES fuzzing examples per operation, $STATEFUL_SCENARIOS stateful scenarios, seed $SEED, $((SECONDS - STARTED)) s)"
for line in "${RESULTS[@]}"; do
    echo "   $line"
done
if grep -q "panicked" "$WORK/server.log"; then
    echo "   the server logged a panic:"
    grep -m5 "panicked" "$WORK/server.log"
    FAILED=1
fi
lookups="$(wc -l <"$WORK/dns.log" 2>/dev/null || echo 0)"
hooks="$(wc -l <"$WORK/webhook.log" 2>/dev/null || echo 0)"
mails="$(find "$WORK/outbox" -type f 2>/dev/null | wc -l)"
echo "   outbound: $lookups DNS queries answered by the stub, $hooks webhook requests received, $mails emails in the outbox"
if [[ "$lookups" -eq 0 ]]; then
    # /v1/verify of the document's example always looks up a domain: none here means the
    # server asked another resolver.
    echo "   no DNS query reached the stub resolver: POSTHORN_DNS_SERVERS was not honoured"
    FAILED=1
fi
exit "$FAILED"
