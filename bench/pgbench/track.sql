-- The statements one `POST /v1/track` makes on PostgreSQL (keys are cached by the server):
-- core/src/app/track.rs → plan_upsert (contact_by_email), add_membership_jobs
-- (tracked_segments), then Store::commit of [InsertContact | UpdateContact, AppendEvent]
-- in one transaction (adapters/postgres/src/{contacts,segments,commit}.rs). No job is
-- enqueued (the workspace has no tracked segment), so there is no pg_notify.
--
-- Request i of the HTTP benchmark goes to u{i % 100000}@bench.io with data {seq: i,
-- plan: "pro"}; client c of pgbench makes requests c, c + 64, c + 128, ... like connection
-- c of the load generator (run with -D ws=<workspace id> -D k=0 -c 64).
\set i :client_id + :k * 64
\set n :i % 100000
\set k :k + 1
SELECT (c.id IS NOT NULL)::int AS found, c.id AS cid, c.version AS ver, c.workspace_id,
       c.email, c.subscribed, c.data, c.status, c.expires_at, c.created_at, c.updated_at
  FROM (VALUES (1)) AS one (x)
  LEFT JOIN contacts c ON c.workspace_id = :ws AND c.email = 'u' || :n || '@bench.io' \gset
SELECT workspace_id, id, name, description, segment_type, condition, track_membership,
       created_at, updated_at
  FROM segments WHERE workspace_id = :ws AND segment_type = 'DYNAMIC' AND track_membership
  ORDER BY created_at, id;
BEGIN;
\if :found
UPDATE contacts SET email = 'u' || :n || '@bench.io', subscribed = true,
       data = jsonb_build_object('seq', :i::bigint, 'plan', 'pro'), status = 'ACTIVE',
       expires_at = NULL, created_at = now(), updated_at = now(), version = version + 1
 WHERE workspace_id = :ws AND id = :cid AND version = :ver;
\else
INSERT INTO contacts (workspace_id, id, email, subscribed, data, status, expires_at,
                      created_at, updated_at, version)
VALUES (:ws, gen_random_uuid()::text, 'u' || :n || '@bench.io', true,
        jsonb_build_object('seq', :i::bigint, 'plan', 'pro'), 'ACTIVE', NULL, now(), now(), 0)
RETURNING id AS cid \gset
\endif
INSERT INTO events (workspace_id, id, name, data, contact_id, email_id, created_at)
VALUES (:ws, gen_random_uuid()::text, 'bench-event-' || (:i::bigint % 16),
        jsonb_build_object('seq', :i::bigint, 'plan', 'pro'), :cid, NULL, now());
COMMIT;
