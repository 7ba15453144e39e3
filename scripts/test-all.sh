#!/usr/bin/env bash
# Runs every test of the workspace: unit, property, conformance (memory and PostgreSQL) and
# in-process API tests. Starts a throwaway PostgreSQL and Redis on loopback (installing the
# Debian packages when missing) and stops them again, whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."

eval "$(bash scripts/services.sh start)"
trap 'bash scripts/services.sh stop' EXIT

cargo test --workspace --all-targets --locked

# The in-process API suite once more, on PostgreSQL (each test gets its own database).
POSTHORN_API_TEST_STORE=postgres cargo test -p posthorn-server --test api --locked
