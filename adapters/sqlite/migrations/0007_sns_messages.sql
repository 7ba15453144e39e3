-- SNS messages already processed (POST /webhooks/sns), so a redelivery is applied once.
CREATE TABLE sns_messages (
    message_id   TEXT PRIMARY KEY,
    processed_at INTEGER NOT NULL
) STRICT;
