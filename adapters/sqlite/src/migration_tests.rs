//! Migrations that move data: a database written by an older version opens with its
//! records intact.

use posthorn_core::model::{EmailId, WorkspaceId};
use posthorn_core::ports::{Attachment, Mailbox, Store};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::SqlitePool;

use crate::{SqliteOptions, SqliteStore};

/// The last migration before emails' content moved to `email_contents` (0017).
const BEFORE_EMAIL_CONTENTS: i64 = 16;

#[tokio::test]
async fn an_email_written_before_its_content_moved_is_read_whole() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("posthorn.db");
    let attachment = Attachment {
        filename: "invoice.pdf".into(),
        content_type: "application/pdf".into(),
        content: vec![1, 2, 3, 4],
        content_id: None,
        inline: false,
    };
    let mailbox = |email: &str| Mailbox {
        name: None,
        email: email.into(),
    };
    let json = |value: serde_json::Value| value.to_string();

    // The schema as of migration 0016, with one email in it, content and all.
    let old = SqlitePool::connect_with(
        SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true),
    )
    .await
    .expect("old database");
    sqlx::migrate!("./migrations")
        .run_to(BEFORE_EMAIL_CONTENTS, &old)
        .await
        .expect("migrations up to 0016");
    sqlx::query(
        "INSERT INTO emails (workspace_id, id, contact_id, to_mailbox, from_mailbox, subject, \
         html, text, headers, attachments, source_type, status, message_id, created_at, \
         updated_at, opens) \
         VALUES ('ws', 'em', 'ct', ?, ?, 'Invoice', '<p>Your invoice</p>', 'Your invoice', \
         ?, ?, 'TRANSACTIONAL', 'SENT', '<em@example.com>', 1, 2, 3)",
    )
    .bind(json(serde_json::json!(mailbox("ada@example.org"))))
    .bind(json(serde_json::json!(mailbox("billing@example.com"))))
    .bind(json(serde_json::json!([["X-Invoice", "42"]])))
    .bind(json(serde_json::json!([attachment])))
    .execute(&old)
    .await
    .expect("an email in the old schema");
    old.close().await;

    let store = SqliteStore::open(&path, SqliteOptions::default())
        .await
        .expect("the old database opens and migrates");
    let (ws, id) = (WorkspaceId::from("ws"), EmailId::from("em"));
    let email = store
        .email(&ws, &id)
        .await
        .expect("read")
        .expect("the email is still there");
    assert_eq!(email.html, "<p>Your invoice</p>");
    assert_eq!(email.text.as_deref(), Some("Your invoice"));
    assert_eq!(email.attachments, vec![attachment]);
    assert_eq!(email.headers, vec![("X-Invoice".into(), "42".into())]);
    assert_eq!(
        (email.subject.as_str(), email.lifecycle.opens),
        ("Invoice", 3)
    );
    let light = store
        .email_without_content(&ws, &id)
        .await
        .expect("read without content");
    assert_eq!(light, Some(email.without_content()));
}
