-- Posthorn's schema on SQLite. Mirrors the PostgreSQL adapter's tables (migrations there),
-- with SQLite's types:
-- - ids are UUIDv7 text compared with the BINARY collation (byte order, as in Rust), so
--   keyset order in SQL equals the order of the strings in Rust;
-- - instants are INTEGER microseconds since the Unix epoch (the precision PostgreSQL keeps),
--   so that comparisons and ranges are plain integer ones;
-- - booleans are 0/1 INTEGERs, JSON is TEXT written by serde_json (read with JSON1);
-- - workspace-owned tables key on (workspace_id, id), which doubles as the index for
--   newest-first pages. No foreign keys: the Store port applies writes as given.
-- STRICT tables: a value of the wrong type is refused instead of silently stored.

CREATE TABLE workspaces (
    id                    TEXT PRIMARY KEY,
    name                  TEXT NOT NULL,
    disabled              INTEGER NOT NULL,
    active_contact_limit  INTEGER,
    rate_limit_per_minute INTEGER NOT NULL,
    send_rate_per_second  REAL NOT NULL,
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL
) STRICT;

CREATE TABLE key_sets (
    workspace_id       TEXT NOT NULL,
    id                 TEXT NOT NULL,
    name               TEXT,
    domains            TEXT NOT NULL,
    public_key_hash    TEXT NOT NULL,
    secret_key_hash    TEXT NOT NULL,
    public_key_preview TEXT NOT NULL,
    secret_key_preview TEXT NOT NULL,
    created_at         INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, id)
) STRICT, WITHOUT ROWID;
CREATE INDEX key_sets_public_key_hash ON key_sets (public_key_hash);
CREATE INDEX key_sets_secret_key_hash ON key_sets (secret_key_hash);

CREATE TABLE domains (
    workspace_id    TEXT NOT NULL,
    id              TEXT NOT NULL,
    domain          TEXT NOT NULL,
    verified        INTEGER NOT NULL,
    inbound_enabled INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, id),
    UNIQUE (workspace_id, domain)
) STRICT, WITHOUT ROWID;

CREATE TABLE contacts (
    workspace_id TEXT NOT NULL,
    id           TEXT NOT NULL,
    email        TEXT NOT NULL,
    subscribed   INTEGER NOT NULL,
    data         TEXT NOT NULL,
    status       TEXT NOT NULL,
    expires_at   INTEGER,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    version      INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, id),
    UNIQUE (workspace_id, email)
) STRICT;
CREATE INDEX contacts_status ON contacts (workspace_id, status, created_at, id);

CREATE TABLE templates (
    workspace_id  TEXT NOT NULL,
    id            TEXT NOT NULL,
    name          TEXT NOT NULL,
    description   TEXT,
    subject       TEXT NOT NULL,
    body          TEXT NOT NULL,
    text          TEXT,
    from_address  TEXT,
    from_name     TEXT,
    reply_to      TEXT,
    template_type TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, id)
) STRICT;
CREATE INDEX templates_by_time ON templates (workspace_id, created_at, id);

CREATE TABLE emails (
    workspace_id        TEXT NOT NULL,
    id                  TEXT NOT NULL,
    contact_id          TEXT NOT NULL,
    to_mailbox          TEXT NOT NULL,
    from_mailbox        TEXT NOT NULL,
    reply_to            TEXT,
    subject             TEXT NOT NULL,
    html                TEXT NOT NULL,
    text                TEXT,
    headers             TEXT NOT NULL,
    attachments         TEXT NOT NULL,
    template_id         TEXT,
    campaign_id         TEXT,
    source_type         TEXT NOT NULL,
    status              TEXT NOT NULL,
    message_id          TEXT NOT NULL,
    provider_message_id TEXT,
    error               TEXT,
    created_at          INTEGER NOT NULL,
    sent_at             INTEGER,
    updated_at          INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, id)
) STRICT;
-- A campaign mails each contact at most once; per-status counts of a campaign's emails.
CREATE UNIQUE INDEX emails_campaign_contact ON emails (workspace_id, campaign_id, contact_id)
    WHERE campaign_id IS NOT NULL;
CREATE INDEX emails_campaign_status ON emails (workspace_id, campaign_id, status);

CREATE TABLE events (
    workspace_id TEXT NOT NULL,
    id           TEXT NOT NULL,
    name         TEXT NOT NULL,
    data         TEXT NOT NULL,
    contact_id   TEXT,
    email_id     TEXT,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, id)
) STRICT;
CREATE INDEX events_by_name ON events (workspace_id, name, id);
CREATE INDEX events_by_contact ON events (workspace_id, contact_id, id);
-- `event.<name>` / `email.<activity>` filters: EXISTS probes by contact, name and time.
CREATE INDEX events_by_contact_name ON events (workspace_id, contact_id, name, created_at);

CREATE TABLE segments (
    workspace_id     TEXT NOT NULL,
    id               TEXT NOT NULL,
    name             TEXT NOT NULL,
    description      TEXT,
    segment_type     TEXT NOT NULL,
    -- The condition's API JSON as serialized by the core, kept verbatim.
    condition        TEXT,
    track_membership INTEGER NOT NULL,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, id)
) STRICT;
CREATE INDEX segments_by_time ON segments (workspace_id, created_at, id);

-- Stored members of STATIC and tracked DYNAMIC segments. The primary key serves
-- `segment.<id>` filters (segment, contact) and member pages in contact-id order.
CREATE TABLE segment_members (
    workspace_id TEXT NOT NULL,
    segment_id   TEXT NOT NULL,
    contact_id   TEXT NOT NULL,
    PRIMARY KEY (workspace_id, segment_id, contact_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX segment_members_by_contact ON segment_members (workspace_id, contact_id);

CREATE TABLE campaigns (
    workspace_id        TEXT NOT NULL,
    id                  TEXT NOT NULL,
    name                TEXT NOT NULL,
    description         TEXT,
    subject             TEXT NOT NULL,
    body                TEXT NOT NULL,
    from_address        TEXT NOT NULL,
    from_name           TEXT,
    reply_to            TEXT,
    audience_type       TEXT NOT NULL,
    segment_id          TEXT,
    audience_condition  TEXT,
    status              TEXT NOT NULL,
    scheduled_for       INTEGER,
    sent_at             INTEGER,
    total_recipients    INTEGER NOT NULL,
    audience_until_id   TEXT,
    expanded_through_id TEXT,
    expansion_done      INTEGER NOT NULL,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    version             INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, id)
) STRICT;
CREATE INDEX campaigns_by_time ON campaigns (workspace_id, created_at, id);
CREATE INDEX campaigns_by_status ON campaigns (workspace_id, status, created_at, id);

-- state: 'queued' (waiting for run_at), 'running' (leased until lease_until; claimable
-- again once that has passed), 'dead' (parked). Completed jobs are deleted.
-- `claims` counts claims since the job was enqueued or last put back with `retry`.
CREATE TABLE jobs (
    id          TEXT PRIMARY KEY,
    payload     TEXT NOT NULL,
    run_at      INTEGER NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    claims      INTEGER NOT NULL DEFAULT 0,
    state       TEXT NOT NULL DEFAULT 'queued'
                CHECK (state IN ('queued', 'running', 'dead')),
    lease_token TEXT,
    lease_until INTEGER,
    last_error  TEXT
) STRICT;
-- Claims read queued jobs in (run_at, id) order and expired leases in (lease_until, id)
-- order, each from its own partial index; dead jobs are listed by id from theirs.
CREATE INDEX jobs_queued ON jobs (run_at, id) WHERE state = 'queued';
CREATE INDEX jobs_leased ON jobs (lease_until, id) WHERE state = 'running';
CREATE INDEX jobs_dead ON jobs (id) WHERE state = 'dead';
