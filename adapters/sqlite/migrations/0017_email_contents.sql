-- An email's content (HTML body, text part, attachments) in a table of its own. SQLite
-- writes a row whole: while the content sat in `emails`, every change of an email's state
-- (sent, delivered, each open and click) rewrote its bodies and attachments, and reading the
-- state columns, which came after them in the row, walked the content's overflow pages.
-- Reads of the whole email join the two tables by their key.
CREATE TABLE email_contents (
    workspace_id TEXT NOT NULL,
    id           TEXT NOT NULL,
    html         TEXT NOT NULL,
    text         TEXT,
    attachments  TEXT NOT NULL,
    PRIMARY KEY (workspace_id, id)
) STRICT;
INSERT INTO email_contents (workspace_id, id, html, text, attachments)
    SELECT workspace_id, id, html, text, attachments FROM emails;
ALTER TABLE emails DROP COLUMN html;
ALTER TABLE emails DROP COLUMN text;
ALTER TABLE emails DROP COLUMN attachments;
