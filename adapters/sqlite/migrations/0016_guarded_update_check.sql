-- A guarded update checked inside SQL, so that a group of `/v1/track`s for contacts that
-- already exist goes to the writer in one query (`batch::OneTrip`), as a group of new
-- contacts does.
--
-- A contact's update is guarded by its version (`... WHERE version = ?`): finding no row
-- means another change came first. Checked in Rust, that count took a trip to the writer's
-- thread per update. Now the query follows each update with
-- `INSERT INTO guarded_update_check (changed) VALUES (changes())`: when the update changed
-- no row, the trigger rolls the whole transaction back and fails the query, and the group
-- goes again the long way, each change set in a savepoint, which tells whose it was.
-- The view holds no rows and the insert stores nothing.
CREATE VIEW guarded_update_check AS SELECT 1 AS changed WHERE 0;

CREATE TRIGGER guarded_update_check_holds INSTEAD OF INSERT ON guarded_update_check
    WHEN NEW.changed <> 1
BEGIN
    SELECT RAISE(ROLLBACK, 'a guarded update found its row gone or changed');
END;
