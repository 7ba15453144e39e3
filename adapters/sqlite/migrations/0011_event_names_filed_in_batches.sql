-- Events by name (`GET /events?event=`, `GET /events/names`) in two parts, so that a group
-- commit no longer rewrites one page of a name index per event name it holds.
--
-- `events_by_name (workspace_id, name, id)` took a new event at the end of its name's range:
-- one leaf per distinct name in each group, plus the neighbours of every split, 41 % of the
-- pages a group of `/v1/track`s wrote to the WAL. Now a trigger appends each new event to
-- `event_names_recent` (keyed by id, so appended too), and the writer moves that table's
-- rows into `event_names_filed` (keyed by name) a thousand or so at a time
-- (`group::transaction::file_event_names`), where they fill pages instead of touching them.
-- A read by name takes both parts: the filed index and the (small) recent table.

CREATE TABLE event_names_recent (
    workspace_id TEXT NOT NULL,
    id           TEXT NOT NULL,
    name         TEXT NOT NULL,
    PRIMARY KEY (workspace_id, id)
) STRICT, WITHOUT ROWID;

CREATE TABLE event_names_filed (
    workspace_id TEXT NOT NULL,
    name         TEXT NOT NULL,
    id           TEXT NOT NULL,
    PRIMARY KEY (workspace_id, name, id)
) STRICT, WITHOUT ROWID;

INSERT INTO event_names_filed (workspace_id, name, id)
    SELECT workspace_id, name, id FROM events;

DROP INDEX events_by_name;

CREATE TRIGGER event_names_insert AFTER INSERT ON events BEGIN
    INSERT INTO event_names_recent (workspace_id, id, name)
        VALUES (NEW.workspace_id, NEW.id, NEW.name);
END;

-- Events are never deleted or renamed today; these keep both parts right if they ever are.
CREATE TRIGGER event_names_delete AFTER DELETE ON events BEGIN
    DELETE FROM event_names_recent WHERE workspace_id = OLD.workspace_id AND id = OLD.id;
    DELETE FROM event_names_filed
        WHERE workspace_id = OLD.workspace_id AND name = OLD.name AND id = OLD.id;
END;

CREATE TRIGGER event_names_update AFTER UPDATE OF workspace_id, id, name ON events BEGIN
    DELETE FROM event_names_recent WHERE workspace_id = OLD.workspace_id AND id = OLD.id;
    DELETE FROM event_names_filed
        WHERE workspace_id = OLD.workspace_id AND name = OLD.name AND id = OLD.id;
    INSERT INTO event_names_recent (workspace_id, id, name)
        VALUES (NEW.workspace_id, NEW.id, NEW.name);
END;
