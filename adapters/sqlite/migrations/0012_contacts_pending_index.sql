-- The index behind the sweep of PENDING contacts (oldest first, `contacts::pending`) covers
-- only PENDING contacts. Over every status it took each new contact, nearly always ACTIVE,
-- at the end of its workspace's ACTIVE range: about five pages rewritten by every group
-- commit of `/v1/track`s, a tenth of what the group wrote, for an index no read of ACTIVE
-- contacts uses (audiences and pages go by id; counts come from `contact_counts`).
DROP INDEX contacts_status;
CREATE INDEX contacts_pending ON contacts (workspace_id, created_at, id) WHERE status = 'PENDING';
