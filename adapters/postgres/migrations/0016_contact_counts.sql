-- How many contacts each workspace has, by status, so that the `total` of an unfiltered
-- `GET /contacts` and the active-contact limit no longer count the whole workspace (about
-- 120 ms at a million contacts, on every first page and, with a limit, on every new contact).
--
-- Kept as rows of changes that are only ever inserted: one counter row per workspace would
-- make every transaction creating a contact wait for the one before it to commit (its row
-- lock), and group commits run two at a time. A count sums its workspace's rows; the store
-- folds them into one per status once there are many (`contacts::fold_counts`).
--
-- New contacts are counted by the statement that inserts them (`batch.rs`: the insert and
-- its count in one statement, cheaper than a trigger on the hottest write); status changes
-- and deletions, which are rare, by the row triggers below. Contacts loaded around the store
-- (COPY, `posthorn export`) are counted by `contact_counts::rebuild`.
CREATE TABLE contact_counts (
    workspace_id text COLLATE "C" NOT NULL,
    status       text NOT NULL,
    n            bigint NOT NULL
);
CREATE INDEX contact_counts_by_workspace ON contact_counts (workspace_id, status);

INSERT INTO contact_counts (workspace_id, status, n)
    SELECT workspace_id, status, count(*) FROM contacts GROUP BY workspace_id, status;

CREATE FUNCTION posthorn_contact_counts_moved() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO contact_counts (workspace_id, status, n)
        VALUES (OLD.workspace_id, OLD.status, -1);
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO contact_counts (workspace_id, status, n)
            VALUES (NEW.workspace_id, NEW.status, 1);
    END IF;
    RETURN NULL;
END $$;

-- PostgreSQL evaluates WHEN itself: an update that changes neither column calls nothing.
CREATE TRIGGER contact_counts_update AFTER UPDATE OF workspace_id, status ON contacts
    FOR EACH ROW
    WHEN (OLD.workspace_id IS DISTINCT FROM NEW.workspace_id OR OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION posthorn_contact_counts_moved();

CREATE TRIGGER contact_counts_delete AFTER DELETE ON contacts
    FOR EACH ROW EXECUTE FUNCTION posthorn_contact_counts_moved();
