-- How many contacts each workspace has, by status, kept by triggers: the first page of
-- `GET /contacts` (its `total`) and the active-contact limit read a row here instead of
-- counting the whole workspace.
CREATE TABLE contact_counts (
    workspace_id TEXT NOT NULL,
    status       TEXT NOT NULL,
    n            INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, status)
) STRICT, WITHOUT ROWID;

INSERT INTO contact_counts (workspace_id, status, n)
    SELECT workspace_id, status, count(*) FROM contacts GROUP BY workspace_id, status;

CREATE TRIGGER contact_counts_insert AFTER INSERT ON contacts BEGIN
    INSERT INTO contact_counts (workspace_id, status, n) VALUES (NEW.workspace_id, NEW.status, 1)
        ON CONFLICT (workspace_id, status) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER contact_counts_delete AFTER DELETE ON contacts BEGIN
    UPDATE contact_counts SET n = n - 1
        WHERE workspace_id = OLD.workspace_id AND status = OLD.status;
END;

CREATE TRIGGER contact_counts_update AFTER UPDATE OF workspace_id, status ON contacts
    WHEN NEW.workspace_id IS NOT OLD.workspace_id OR NEW.status IS NOT OLD.status
BEGIN
    UPDATE contact_counts SET n = n - 1
        WHERE workspace_id = OLD.workspace_id AND status = OLD.status;
    INSERT INTO contact_counts (workspace_id, status, n) VALUES (NEW.workspace_id, NEW.status, 1)
        ON CONFLICT (workspace_id, status) DO UPDATE SET n = n + 1;
END;
