-- The verdicts the provider that received a message gave (Amazon SES's receipt), used in
-- place of Posthorn's own checks of those kinds. NULL when none were given.
ALTER TABLE inbound_emails ADD COLUMN provider_verdicts jsonb;
