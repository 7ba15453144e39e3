-- SNS messages already processed (POST /webhooks/sns), so a redelivery is applied once.
CREATE TABLE sns_messages (
    message_id   text COLLATE "C" PRIMARY KEY,
    processed_at timestamptz NOT NULL
);
