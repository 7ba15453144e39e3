-- What happens to an email after it was sent, found again by the ids providers report,
-- and the deployment-wide secrets (tracking token key) every process shares.
ALTER TABLE emails ADD COLUMN delivered_at INTEGER;
ALTER TABLE emails ADD COLUMN opened_at INTEGER;
ALTER TABLE emails ADD COLUMN last_opened_at INTEGER;
ALTER TABLE emails ADD COLUMN opens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE emails ADD COLUMN clicked_at INTEGER;
ALTER TABLE emails ADD COLUMN last_clicked_at INTEGER;
ALTER TABLE emails ADD COLUMN clicks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE emails ADD COLUMN bounced_at INTEGER;
ALTER TABLE emails ADD COLUMN bounce_type TEXT;
ALTER TABLE emails ADD COLUMN bounce_detail TEXT;
ALTER TABLE emails ADD COLUMN complained_at INTEGER;

CREATE INDEX emails_provider_message_id ON emails (provider_message_id)
    WHERE provider_message_id IS NOT NULL;
CREATE INDEX emails_message_id ON emails (message_id);
CREATE INDEX emails_sent_at ON emails (workspace_id, sent_at) WHERE sent_at IS NOT NULL;

-- Per-workspace switches of open and click tracking (on by default).
ALTER TABLE workspaces ADD COLUMN track_opens INTEGER NOT NULL DEFAULT 1;
ALTER TABLE workspaces ADD COLUMN track_clicks INTEGER NOT NULL DEFAULT 1;

CREATE TABLE deployment_secrets (
    name  TEXT PRIMARY KEY,
    value BLOB NOT NULL
) STRICT;
