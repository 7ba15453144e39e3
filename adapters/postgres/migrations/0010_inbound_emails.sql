-- Received mail: one record per (message, receiving workspace), its raw bytes kept until
-- the retention period ends (then `raw` is NULL), `processed_at` set once its
-- `email.received` events were emitted.
CREATE TABLE inbound_emails (
    workspace_id  text COLLATE "C" NOT NULL,
    id            text COLLATE "C" NOT NULL,
    envelope_from text,
    recipients    jsonb NOT NULL,
    client_ip     text,
    helo          text,
    raw           bytea,
    received_at   timestamptz NOT NULL,
    processed_at  timestamptz,
    PRIMARY KEY (workspace_id, id)
);
-- The retention purge walks only processed messages that still hold their bytes.
CREATE INDEX inbound_emails_purge ON inbound_emails (received_at)
    WHERE raw IS NOT NULL AND processed_at IS NOT NULL;
