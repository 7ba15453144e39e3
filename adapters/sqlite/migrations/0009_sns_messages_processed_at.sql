-- The purge of old SNS message records (maintenance) reads them by age.
CREATE INDEX sns_messages_processed_at ON sns_messages (processed_at);
