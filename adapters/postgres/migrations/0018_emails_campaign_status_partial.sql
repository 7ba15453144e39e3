-- The per-status counts of a campaign's emails (`campaign_email_counts`) read campaign mail
-- only (`campaign_id = $2`), but the index held every email, transactional mail under a
-- NULL campaign. Now it holds campaign mail alone: each transactional email's insert, and
-- every change of its status (delivery, opens, clicks, bounces), updates one index fewer.
DROP INDEX emails_campaign_status;
CREATE INDEX emails_campaign_status ON emails (workspace_id, campaign_id, status)
    WHERE campaign_id IS NOT NULL;
