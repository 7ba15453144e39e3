-- The answer of each `Idempotency-Key`, written in the same transaction as the changes of
-- its request, so that a retry after a crash replays it instead of running again.
-- `scope` is the workspace id, or `admin` for the operator API.
CREATE TABLE idempotency_records (
    scope        TEXT NOT NULL,
    key          TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    status       INTEGER NOT NULL,
    content_type TEXT,
    body         BLOB NOT NULL,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
) STRICT;
-- The maintenance job's purge.
CREATE INDEX idempotency_records_expires_at ON idempotency_records (expires_at);
