-- The one-statement limit of `POST /v1/track` for a new contact: the contact upserted and
-- its event inserted by one prepared statement (a CTE), one transaction per request, no
-- reads before it. No server can do a durable track in fewer round trips or commits; the
-- ceiling script runs it beside track.sql (the statements the server really sends).
--
-- Client c makes requests c, c + 64, c + 128, ... (run with -D ws=<workspace id> -D k=0
-- -D run=<n>), each for an address never seen before in the run.
\set i :client_id + :k * 64
\set k :k + 1
WITH c AS (
  INSERT INTO contacts (workspace_id, id, email, subscribed, data, status, expires_at,
                        created_at, updated_at, version)
  VALUES (:ws, gen_random_uuid()::text, 'fresh' || :run || '-' || :i || '@bench.io', true,
          jsonb_build_object('seq', :i::bigint, 'plan', 'pro'), 'ACTIVE', NULL, now(), now(), 0)
  ON CONFLICT (workspace_id, email) DO UPDATE
     SET data = EXCLUDED.data, updated_at = now(), version = contacts.version + 1
  RETURNING id
)
INSERT INTO events (workspace_id, id, name, data, contact_id, email_id, created_at)
SELECT :ws, gen_random_uuid()::text, 'bench-event-' || (:i::bigint % 16),
       jsonb_build_object('seq', :i::bigint, 'plan', 'pro'), c.id, NULL, now()
  FROM c;
