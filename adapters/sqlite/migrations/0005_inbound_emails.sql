-- Received mail: one record per (message, receiving workspace), its raw bytes kept until
-- the retention period ends (then `raw` is NULL), `processed_at` set once its
-- `email.received` events were emitted.
CREATE TABLE inbound_emails (
    workspace_id  TEXT NOT NULL,
    id            TEXT NOT NULL,
    envelope_from TEXT,
    recipients    TEXT NOT NULL,
    client_ip     TEXT,
    helo          TEXT,
    raw           BLOB,
    received_at   INTEGER NOT NULL,
    processed_at  INTEGER,
    PRIMARY KEY (workspace_id, id)
) STRICT;
-- The retention purge walks only processed messages that still hold their bytes.
CREATE INDEX inbound_emails_purge ON inbound_emails (received_at)
    WHERE raw IS NOT NULL AND processed_at IS NOT NULL;
