//! Guarded contact writes racing each other: one winner, the others `Conflict`.

use posthorn_core::model::Contact;
use posthorn_core::ports::{ChangeSet, StoreError, Write};

use crate::fixtures::{commit, contact, must_read_contact, now_ms, workspace};
use crate::StorePorts;

/// Runs `writes` as one commit each, all at once, and returns how many succeeded;
/// every other one must fail with `Conflict`.
pub(crate) async fn race(p: &StorePorts, what: &str, writes: Vec<Write>) -> usize {
    let mut tasks = tokio::task::JoinSet::new();
    for write in writes {
        let store = p.store.clone();
        tasks.spawn(async move {
            store
                .commit(ChangeSet {
                    writes: vec![write],
                })
                .await
        });
    }
    let mut won = 0;
    while let Some(done) = tasks.join_next().await {
        match done.unwrap_or_else(|e| panic!("{what}: a task panicked: {e}")) {
            Ok(()) => won += 1,
            Err(StoreError::Conflict(_)) => {}
            Err(other) => panic!("{what}: expected StoreError::Conflict, got {other:?}"),
        }
    }
    won
}

/// 12 concurrent inserts of one address (as different contacts): exactly one commits,
/// the others conflict, and the address (in any case) finds that contact at version 0.
pub async fn contact_concurrent_inserts_of_one_email_one_winner(p: &StorePorts) {
    let ws = workspace(p, "insert-race").await;
    let now = now_ms();
    let first = contact(&ws.id, "race", true, now);
    let inserts: Vec<Contact> = (0..12)
        .map(|_| Contact {
            id: crate::fixtures::fresh_id(),
            ..first.clone()
        })
        .collect();
    let writes = inserts.iter().cloned().map(Write::InsertContact).collect();
    assert_eq!(race(p, "racing inserts", writes).await, 1, "winners");
    let stored = p
        .store
        .contact_by_email(&ws.id, &first.email.as_str().to_uppercase())
        .await
        .expect("contact_by_email failed")
        .expect("the winner must be stored");
    assert!(
        inserts.iter().any(|c| c.id == stored.id),
        "the stored contact is none of the inserted ones"
    );
    assert_eq!(stored.version, 0);
}

/// 8 concurrent updates of one contact at the same version: exactly one commits, the
/// others conflict, and the version moved by one.
pub async fn contact_concurrent_updates_at_one_version_one_winner(p: &StorePorts) {
    let ws = workspace(p, "update-race").await;
    let now = now_ms();
    let c = contact(&ws.id, "versioned", true, now);
    commit(
        p.store.as_ref(),
        "inserting the contact",
        vec![Write::InsertContact(c.clone())],
    )
    .await;
    let writes = (0..8)
        .map(|i| {
            let mut update = c.clone();
            update.subscribed = i % 2 == 0;
            Write::UpdateContact(update)
        })
        .collect();
    assert_eq!(race(p, "racing updates", writes).await, 1, "winners");
    let stored = must_read_contact(p.store.as_ref(), &ws.id, &c.id).await;
    assert_eq!(stored.version, 1);
}
