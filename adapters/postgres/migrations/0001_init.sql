-- Posthorn's schema. Ids are UUIDv7 strings made by the core, stored as text in the "C"
-- collation so that keyset order in SQL equals the byte order of the strings in Rust.
-- Workspace-owned tables key on (workspace_id, id): a read or write with the wrong
-- workspace never touches another tenant's row, and the primary key doubles as the
-- (workspace_id, id DESC) index for newest-first pages (a B-tree scans both ways).
-- No foreign keys: the Store port applies writes as given, like the memory adapter.

CREATE TABLE workspaces (
    id                    text COLLATE "C" PRIMARY KEY,
    name                  text NOT NULL,
    disabled              boolean NOT NULL,
    active_contact_limit  bigint,
    rate_limit_per_minute bigint NOT NULL,
    send_rate_per_second  double precision NOT NULL,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL
);

CREATE TABLE key_sets (
    workspace_id       text COLLATE "C" NOT NULL,
    id                 text COLLATE "C" NOT NULL,
    name               text,
    domains            jsonb NOT NULL,
    public_key_hash    text NOT NULL,
    secret_key_hash    text NOT NULL,
    public_key_preview text NOT NULL,
    secret_key_preview text NOT NULL,
    created_at         timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, id)
);
CREATE INDEX key_sets_public_key_hash ON key_sets (public_key_hash);
CREATE INDEX key_sets_secret_key_hash ON key_sets (secret_key_hash);

CREATE TABLE domains (
    workspace_id    text COLLATE "C" NOT NULL,
    id              text COLLATE "C" NOT NULL,
    domain          text NOT NULL,
    verified        boolean NOT NULL,
    inbound_enabled boolean NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, id),
    UNIQUE (workspace_id, domain)
);

CREATE TABLE contacts (
    workspace_id text COLLATE "C" NOT NULL,
    id           text COLLATE "C" NOT NULL,
    email        text NOT NULL,
    subscribed   boolean NOT NULL,
    data         jsonb NOT NULL,
    status       text NOT NULL,
    expires_at   timestamptz,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    version      bigint NOT NULL,
    PRIMARY KEY (workspace_id, id),
    UNIQUE (workspace_id, email)
);
CREATE INDEX contacts_status ON contacts (workspace_id, status, created_at, id);

CREATE TABLE templates (
    workspace_id  text COLLATE "C" NOT NULL,
    id            text COLLATE "C" NOT NULL,
    name          text NOT NULL,
    description   text,
    subject       text NOT NULL,
    body          text NOT NULL,
    text          text,
    from_address  text,
    from_name     text,
    reply_to      text,
    template_type text NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, id)
);

CREATE TABLE emails (
    workspace_id        text COLLATE "C" NOT NULL,
    id                  text COLLATE "C" NOT NULL,
    contact_id          text COLLATE "C" NOT NULL,
    to_mailbox          jsonb NOT NULL,
    from_mailbox        jsonb NOT NULL,
    reply_to            text,
    subject             text NOT NULL,
    html                text NOT NULL,
    text                text,
    headers             jsonb NOT NULL,
    attachments         jsonb NOT NULL,
    template_id         text COLLATE "C",
    campaign_id         text COLLATE "C",
    source_type         text NOT NULL,
    status              text NOT NULL,
    message_id          text NOT NULL,
    provider_message_id text,
    error               text,
    created_at          timestamptz NOT NULL,
    sent_at             timestamptz,
    updated_at          timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, id)
);

CREATE TABLE events (
    workspace_id text COLLATE "C" NOT NULL,
    id           text COLLATE "C" NOT NULL,
    name         text COLLATE "C" NOT NULL,
    data         jsonb NOT NULL,
    contact_id   text COLLATE "C",
    email_id     text COLLATE "C",
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, id)
);
CREATE INDEX events_by_name ON events (workspace_id, name, id DESC);
CREATE INDEX events_by_contact ON events (workspace_id, contact_id, id DESC);

-- state: 'queued' (waiting for run_at), 'running' (leased until lease_until; claimable
-- again once that has passed), 'dead' (parked). Completed jobs are deleted.
CREATE TABLE jobs (
    id          text COLLATE "C" PRIMARY KEY,
    payload     jsonb NOT NULL,
    run_at      timestamptz NOT NULL,
    attempts    integer NOT NULL DEFAULT 0,
    state       text NOT NULL DEFAULT 'queued'
                CHECK (state IN ('queued', 'running', 'dead')),
    lease_token text,
    lease_until timestamptz,
    last_error  text,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX jobs_due ON jobs (state, run_at);

-- Substring search on contact emails: a trigram index when pg_trgm can be had (it ships
-- with Debian's postgresql package and is a trusted extension); plain scans otherwise.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
        CREATE INDEX contacts_email_trgm ON contacts USING gin (email gin_trgm_ops);
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'pg_trgm not installed (insufficient privilege); contact search will scan';
END
$$;
