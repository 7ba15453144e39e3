-- Bounces name their email by id alone (the VERP token carries no workspace).
CREATE INDEX emails_by_id ON emails (id);
