-- The counts of 0010 also by subscription, so that the `total` of a
-- `GET /contacts?subscribed=` first page reads them too instead of counting the workspace's
-- matching contacts. One process owns the file, so the table is simply made again.
DROP TRIGGER contact_counts_insert;
DROP TRIGGER contact_counts_delete;
DROP TRIGGER contact_counts_update;
DROP TABLE contact_counts;

CREATE TABLE contact_counts (
    workspace_id TEXT NOT NULL,
    status       TEXT NOT NULL,
    subscribed   INTEGER NOT NULL,
    n            INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, status, subscribed)
) STRICT, WITHOUT ROWID;

INSERT INTO contact_counts (workspace_id, status, subscribed, n)
    SELECT workspace_id, status, subscribed, count(*) FROM contacts
    GROUP BY workspace_id, status, subscribed;

CREATE TRIGGER contact_counts_insert AFTER INSERT ON contacts BEGIN
    INSERT INTO contact_counts (workspace_id, status, subscribed, n)
        VALUES (NEW.workspace_id, NEW.status, NEW.subscribed, 1)
        ON CONFLICT (workspace_id, status, subscribed) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER contact_counts_delete AFTER DELETE ON contacts BEGIN
    UPDATE contact_counts SET n = n - 1
        WHERE workspace_id = OLD.workspace_id AND status = OLD.status
          AND subscribed = OLD.subscribed;
END;

CREATE TRIGGER contact_counts_update AFTER UPDATE OF workspace_id, status, subscribed ON contacts
    WHEN NEW.workspace_id IS NOT OLD.workspace_id OR NEW.status IS NOT OLD.status
         OR NEW.subscribed IS NOT OLD.subscribed
BEGIN
    UPDATE contact_counts SET n = n - 1
        WHERE workspace_id = OLD.workspace_id AND status = OLD.status
          AND subscribed = OLD.subscribed;
    INSERT INTO contact_counts (workspace_id, status, subscribed, n)
        VALUES (NEW.workspace_id, NEW.status, NEW.subscribed, 1)
        ON CONFLICT (workspace_id, status, subscribed) DO UPDATE SET n = n + 1;
END;
