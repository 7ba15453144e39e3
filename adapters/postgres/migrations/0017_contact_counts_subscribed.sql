-- The kept contact counts (0016) also by subscription, so that the `total` of a
-- `GET /contacts?subscribed=` first page reads them too instead of counting the workspace's
-- matching contacts.
--
-- `subscribed` is NULL on rows written by a server that predates this migration (one still
-- running during a rolling upgrade): they count in every unfiltered total, and while a
-- workspace has any, its filtered totals count the contacts as before. A rebuild
-- (`contact_counts::rebuild`) leaves none.
-- No contact changes while the counts are made again: a contact committed between the
-- DELETE and the INSERT below would be counted twice.
LOCK TABLE contacts IN SHARE MODE;

ALTER TABLE contact_counts ADD COLUMN subscribed boolean;

DELETE FROM contact_counts;
INSERT INTO contact_counts (workspace_id, status, subscribed, n)
    SELECT workspace_id, status, subscribed, count(*) FROM contacts
    GROUP BY workspace_id, status, subscribed;

CREATE OR REPLACE FUNCTION posthorn_contact_counts_moved() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO contact_counts (workspace_id, status, subscribed, n)
        VALUES (OLD.workspace_id, OLD.status, OLD.subscribed, -1);
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO contact_counts (workspace_id, status, subscribed, n)
            VALUES (NEW.workspace_id, NEW.status, NEW.subscribed, 1);
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER contact_counts_update ON contacts;
-- An unsubscribe now moves a count too; PostgreSQL still evaluates WHEN itself, so an
-- update that changes none of the three columns calls nothing.
CREATE TRIGGER contact_counts_update AFTER UPDATE OF workspace_id, status, subscribed ON contacts
    FOR EACH ROW
    WHEN (OLD.workspace_id IS DISTINCT FROM NEW.workspace_id
          OR OLD.status IS DISTINCT FROM NEW.status
          OR OLD.subscribed IS DISTINCT FROM NEW.subscribed)
    EXECUTE FUNCTION posthorn_contact_counts_moved();
