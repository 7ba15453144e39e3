#!/usr/bin/env bash
# Runs every test of the workspace: unit, property, conformance (memory, PostgreSQL, Redis)
# and in-process API tests. Starts a throwaway PostgreSQL and Redis on loopback (installing the
# Debian packages when missing) and stops them again, whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."

# One build of everything: incremental caches only cost disk (gigabytes) on a fresh clone.
export CARGO_INCREMENTAL=0

eval "$(bash scripts/services.sh start)"
trap 'bash scripts/services.sh stop' EXIT

cargo test --workspace --all-targets --locked

# The embedding example (docs/embedding.md) builds, runs and delivers its email.
embed_output=$(cargo run -q --locked -p posthorn-runtime --example embed)
echo "$embed_output"
grep -qx 'Welcome aboard, Ada -> ada@example.org' <<<"$embed_output" || {
  echo "runtime/examples/embed.rs did not print the delivered message" >&2
  exit 1
}

# The in-process API suite once more, on PostgreSQL (each test gets its own database) with
# limits and idempotency records on Redis (each test under its own key prefix).
POSTHORN_API_TEST_STORE=postgres POSTHORN_API_TEST_REDIS=1 cargo test -p posthorn-server --test api --locked

# And on SQLite (each test gets a fresh database file in its own temporary directory).
POSTHORN_API_TEST_STORE=sqlite cargo test -p posthorn-server --test api --locked

# The API against its own OpenAPI document (scripts/fuzz-api.sh): schemathesis (pinned) with
# every check and the stateful phase, fixed seed, on the memory store with the debug build
# the tests above made; nothing leaves the machine (stub resolver and webhook receiver on
# loopback, file transport). Any finding fails the run. About 2 to 4 minutes on 2 cores.
FUZZ_BIN=target/debug/posthorn bash scripts/fuzz-api.sh "${POSTHORN_FUZZ_EXAMPLES:-10}"
