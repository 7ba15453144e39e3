-- What happens to an email after it was sent, found again by the ids providers report,
-- and the deployment-wide secrets (tracking token key) every process shares.
ALTER TABLE emails
    ADD COLUMN delivered_at    timestamptz,
    ADD COLUMN opened_at       timestamptz,
    ADD COLUMN last_opened_at  timestamptz,
    ADD COLUMN opens           integer NOT NULL DEFAULT 0,
    ADD COLUMN clicked_at      timestamptz,
    ADD COLUMN last_clicked_at timestamptz,
    ADD COLUMN clicks          integer NOT NULL DEFAULT 0,
    ADD COLUMN bounced_at      timestamptz,
    ADD COLUMN bounce_type     text,
    ADD COLUMN bounce_detail   text,
    ADD COLUMN complained_at   timestamptz;

CREATE INDEX emails_provider_message_id ON emails (provider_message_id)
    WHERE provider_message_id IS NOT NULL;
CREATE INDEX emails_message_id ON emails (message_id);
CREATE INDEX emails_sent_at ON emails (workspace_id, sent_at) WHERE sent_at IS NOT NULL;

-- Per-workspace switches of open and click tracking (on by default).
ALTER TABLE workspaces
    ADD COLUMN track_opens  boolean NOT NULL DEFAULT true,
    ADD COLUMN track_clicks boolean NOT NULL DEFAULT true;

CREATE TABLE deployment_secrets (
    name  text COLLATE "C" PRIMARY KEY,
    value bytea NOT NULL
);
