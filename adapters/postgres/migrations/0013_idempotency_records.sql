-- The answer of each `Idempotency-Key`, written in the same transaction as the changes of
-- its request, so that a retry after a crash replays it instead of running again.
-- `scope` is the workspace id, or `admin` for the operator API.
CREATE TABLE idempotency_records (
    scope        text COLLATE "C" NOT NULL,
    key          text COLLATE "C" NOT NULL,
    fingerprint  text NOT NULL,
    status       integer NOT NULL,
    content_type text,
    body         bytea NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);
-- The maintenance job's purge.
CREATE INDEX idempotency_records_expires_at ON idempotency_records (expires_at);
