-- What delivering one `/v1/send` email costs PostgreSQL (core/src/jobs/deliver.rs, file
-- transport): the workers' claim (one job), the email and its workspace, the commit of
-- [UpdateEmail (SENT: the state columns only), AppendEvent email.sent], and completing
-- (deleting) the job.
-- Mixed 1:1 with send.sql it models the server, which delivers while it accepts.
WITH queued AS (
    SELECT id, run_at FROM jobs
     WHERE state = 'queued' AND run_at <= now()
     ORDER BY run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED),
expired AS (
    SELECT id, run_at FROM jobs
     WHERE state = 'running' AND lease_until <= now()
     ORDER BY lease_until, id LIMIT 1 FOR UPDATE SKIP LOCKED),
due AS (
    SELECT id FROM (SELECT * FROM queued UNION ALL SELECT * FROM expired) AS d
     ORDER BY run_at, id LIMIT 1),
claimed AS (
    UPDATE jobs AS j SET state = 'running', lease_token = gen_random_uuid()::text,
           lease_until = now() + interval '60 seconds', claims = j.claims + 1
      FROM due WHERE j.id = due.id
    RETURNING j.id, j.payload, j.attempts, j.claims, j.lease_token, j.run_at)
SELECT count(*) AS got, max(id) AS jid, max(lease_token) AS tok,
       max(payload ->> 'email_id') AS eid
  FROM claimed \gset
\if :got
SELECT workspace_id, id, contact_id, to_mailbox, from_mailbox, reply_to, subject, html, text,
       headers, attachments, template_id, campaign_id, source_type, status, message_id,
       provider_message_id, error, created_at, sent_at, updated_at
  FROM emails WHERE workspace_id = :ws AND id = :eid \gset e_
SELECT id, name, disabled, active_contact_limit, rate_limit_per_minute, send_rate_per_second,
       created_at, updated_at
  FROM workspaces WHERE id = :ws;
BEGIN;
UPDATE emails SET status = 'SENT', provider_message_id = :e_message_id, error = NULL,
       sent_at = now(), updated_at = now(), delivered_at = NULL, opened_at = NULL,
       last_opened_at = NULL, opens = 0, clicked_at = NULL, last_clicked_at = NULL,
       clicks = 0, bounced_at = NULL, bounce_type = NULL, bounce_detail = NULL,
       complained_at = NULL
 WHERE workspace_id = :ws AND id = :eid;
INSERT INTO events (workspace_id, id, name, data, contact_id, email_id, created_at)
VALUES (:ws, gen_random_uuid()::text, 'email.sent',
        jsonb_build_object('subject', :e_subject::text, 'from', 'bench@example.com',
                           'fromName', NULL::text, 'messageId', :e_message_id::text, 'emailId', :eid::text,
                           'templateId', NULL::text, 'campaignId', NULL::text,
                           'sourceType', 'TRANSACTIONAL'),
        :e_contact_id, :eid, now());
COMMIT;
DELETE FROM jobs WHERE id = :jid AND lease_token = :tok AND state = 'running';
\endif
