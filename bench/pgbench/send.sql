-- The statements one `POST /v1/send` with one recipient makes on PostgreSQL before it
-- answers (keys are cached by the server): core/src/app/send/mod.rs → check_sender
-- (domains), plan_upsert (contact_by_email), add_membership_jobs (tracked_segments, read
-- only when a contact is created), then Store::commit of [InsertContact (new recipient),
-- EnqueueJob, InsertEmail] and pg_notify in one transaction.
--
-- Request i goes to r{i % 100000}@bench.io (new contacts are unsubscribed, without data);
-- client c makes requests c, c + 64, ... (-D ws=<workspace id> -D k=0 -D run=<tag>).
\set i :client_id + :k * 64
\set n :i % 100000
\set k :k + 1
SELECT workspace_id, id, domain, verified, inbound_enabled, created_at, updated_at
  FROM domains WHERE workspace_id = :ws ORDER BY created_at, id;
SELECT (c.id IS NOT NULL)::int AS found, c.id AS cid, c.version AS ver, c.workspace_id,
       c.email, c.subscribed, c.data, c.status, c.expires_at, c.created_at, c.updated_at
  FROM (VALUES (1)) AS one (x)
  LEFT JOIN contacts c ON c.workspace_id = :ws AND c.email = 'r' || :n || '@bench.io' \gset
\if :found
\else
SELECT workspace_id, id, name, description, segment_type, condition, track_membership,
       created_at, updated_at
  FROM segments WHERE workspace_id = :ws AND segment_type = 'DYNAMIC' AND track_membership
  ORDER BY created_at, id;
\endif
BEGIN;
\if :found
\else
INSERT INTO contacts (workspace_id, id, email, subscribed, data, status, expires_at,
                      created_at, updated_at, version)
VALUES (:ws, gen_random_uuid()::text, 'r' || :n || '@bench.io', false, '{}', 'ACTIVE', NULL,
        now(), now(), 0)
RETURNING id AS cid \gset
\endif
INSERT INTO jobs (id, payload, run_at)
VALUES (gen_random_uuid()::text,
        jsonb_build_object('kind', 'deliver_email', 'workspace_id', :ws::text,
                           'email_id', 'e' || :run || '-' || :client_id || '-' || :k),
        now());
INSERT INTO emails (workspace_id, id, contact_id, to_mailbox, from_mailbox, reply_to, subject,
                    html, text, headers, attachments, template_id, campaign_id, source_type,
                    status, message_id, provider_message_id, error, created_at, sent_at,
                    updated_at)
VALUES (:ws, 'e' || :run || '-' || :client_id || '-' || :k, :cid,
        jsonb_build_object('name', NULL, 'email', 'r' || :n || '@bench.io'),
        '{"name": null, "email": "bench@example.com"}', NULL, 'Bench ' || :i,
        '<p>Hello from the benchmark, message ' || :i || '.</p>',
        'Hello from the benchmark, message ' || :i || '.', '[]', '[]', NULL, NULL,
        'TRANSACTIONAL', 'QUEUED', 'e' || :run || '-' || :client_id || '-' || :k || '@example.com',
        NULL, NULL, now(), NULL, now());
SELECT pg_notify('posthorn_jobs', '');
COMMIT;
