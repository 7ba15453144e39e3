-- Segments, stored segment memberships, campaigns, and what evaluating segment conditions
-- in SQL needs (see src/matching.rs for which index serves which filter).

CREATE TABLE segments (
    workspace_id     text COLLATE "C" NOT NULL,
    id               text COLLATE "C" NOT NULL,
    name             text NOT NULL,
    description      text,
    segment_type     text NOT NULL,
    -- The condition's API JSON as serialized by the core, kept verbatim (text, not jsonb,
    -- so that numbers read back exactly as written).
    condition        text,
    track_membership boolean NOT NULL,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, id)
);
CREATE INDEX segments_by_time ON segments (workspace_id, created_at, id);

-- Stored members of STATIC and tracked DYNAMIC segments. The primary key serves
-- `segment.<id>` filters (segment, contact) and member pages in contact-id order.
CREATE TABLE segment_members (
    workspace_id text COLLATE "C" NOT NULL,
    segment_id   text COLLATE "C" NOT NULL,
    contact_id   text COLLATE "C" NOT NULL,
    PRIMARY KEY (workspace_id, segment_id, contact_id)
);
CREATE INDEX segment_members_by_contact ON segment_members (workspace_id, contact_id);

CREATE TABLE campaigns (
    workspace_id        text COLLATE "C" NOT NULL,
    id                  text COLLATE "C" NOT NULL,
    name                text NOT NULL,
    description         text,
    subject             text NOT NULL,
    body                text NOT NULL,
    from_address        text NOT NULL,
    from_name           text,
    reply_to            text,
    audience_type       text NOT NULL,
    segment_id          text COLLATE "C",
    audience_condition  text,
    status              text NOT NULL,
    scheduled_for       timestamptz,
    sent_at             timestamptz,
    total_recipients    bigint NOT NULL,
    audience_until_id   text COLLATE "C",
    expanded_through_id text COLLATE "C",
    expansion_done      boolean NOT NULL,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    version             bigint NOT NULL,
    PRIMARY KEY (workspace_id, id)
);
CREATE INDEX campaigns_by_time ON campaigns (workspace_id, created_at, id);
CREATE INDEX campaigns_by_status ON campaigns (workspace_id, status, created_at, id);

-- A campaign mails each contact at most once; per-status counts of a campaign's emails.
CREATE UNIQUE INDEX emails_campaign_contact ON emails (workspace_id, campaign_id, contact_id)
    WHERE campaign_id IS NOT NULL;
CREATE INDEX emails_campaign_status ON emails (workspace_id, campaign_id, status);

-- `event.<name>` / `email.<activity>` filters: EXISTS probes by contact, name and time.
CREATE INDEX events_by_contact_name ON events (workspace_id, contact_id, name, created_at);

-- `data.<path>` equality and array membership of strings and booleans (`data @> ...`).
CREATE INDEX contacts_data ON contacts USING gin (data jsonb_path_ops);

-- The instant a timestamp string names, or NULL when it is not one: exactly the strings
-- `posthorn_core::segment::parse_timestamp` accepts (TIMESTAMP_PATTERN, then a real date
-- from year 0001 to 9999). Never raises: the date is checked by hand before
-- `make_timestamp` sees it, and the offset is applied arithmetically, so the result does
-- not depend on the session's TimeZone or DateStyle (hence IMMUTABLE).
CREATE FUNCTION posthorn_timestamp(raw text) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    m text[];
    y integer;
    mo integer;
    d integer;
    last_day integer;
    local_time timestamp;
    offset_minutes integer := 0;
BEGIN
    m := regexp_match(raw, '^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])(?:[.]([0-9]{1,6}))?(?:([Zz])|([+-])(0[0-9]|1[0-4]):([0-5][0-9]))$');
    IF m IS NULL THEN
        RETURN NULL;
    END IF;
    y := m[1]::integer;
    mo := m[2]::integer;
    d := m[3]::integer;
    IF y < 1 OR mo < 1 OR mo > 12 OR d < 1 THEN
        RETURN NULL;
    END IF;
    last_day := CASE
        WHEN mo = 2 AND ((y % 4 = 0 AND y % 100 <> 0) OR y % 400 = 0) THEN 29
        WHEN mo = 2 THEN 28
        WHEN mo IN (4, 6, 9, 11) THEN 30
        ELSE 31
    END;
    IF d > last_day THEN
        RETURN NULL;
    END IF;
    local_time := make_timestamp(y, mo, d, m[4]::integer, m[5]::integer, m[6]::integer)
        + rpad(coalesce(m[7], ''), 6, '0')::integer * interval '1 microsecond';
    IF m[9] IS NOT NULL THEN
        offset_minutes := (m[10]::integer * 60 + m[11]::integer)
            * CASE WHEN m[9] = '-' THEN -1 ELSE 1 END;
    END IF;
    RETURN (local_time - offset_minutes * interval '1 minute') AT TIME ZONE 'UTC';
END
$$;
