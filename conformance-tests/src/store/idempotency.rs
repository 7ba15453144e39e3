//! `Idempotency-Key` records: committed with the changes they answer for, all or nothing,
//! one per (scope, key) until expired, and purged once expired.

use posthorn_core::model::{IdempotencyRecord, StoredAnswer};
use posthorn_core::ports::Write;

use crate::fixtures::{commit, commit_conflicts, contact, now_ms, secs, unique, workspace};
use crate::StorePorts;

fn record(
    scope: &str,
    key: &str,
    body: &str,
    at: chrono::DateTime<chrono::Utc>,
) -> IdempotencyRecord {
    IdempotencyRecord {
        scope: scope.to_string(),
        key: key.to_string(),
        fingerprint: format!("fp-{body}"),
        answer: StoredAnswer {
            status: 201,
            content_type: Some("application/json".into()),
            // Not UTF-8 on purpose: the body is kept byte for byte.
            body: [body.as_bytes(), &[0xff, 0x00]].concat(),
        },
        created_at: at,
        expires_at: secs(at, 60),
    }
}

/// A record commits with the change set's other writes and reads back unchanged; a second
/// record of the key conflicts and leaves the first in place; keys are per scope.
pub async fn idempotency_record_committed_once_per_key(p: &StorePorts) {
    let ws = workspace(p, "idem").await;
    let now = now_ms();
    let scope = ws.id.to_string();
    let key = format!("key-{}", unique());
    let first = record(&scope, &key, "first", now);
    let c = contact(&ws.id, "idem", true, now);
    commit(
        p.store.as_ref(),
        "contact with its key",
        vec![
            Write::InsertContact(c.clone()),
            Write::PutIdempotency(first.clone()),
        ],
    )
    .await;
    assert_eq!(
        p.store.idempotency_record(&scope, &key, now).await,
        Ok(Some(first.clone()))
    );
    assert!(matches!(p.store.contact(&ws.id, &c.id).await, Ok(Some(_))));

    commit_conflicts(
        p.store.as_ref(),
        "the same key again",
        vec![Write::PutIdempotency(record(
            &scope,
            &key,
            "second",
            secs(now, 1),
        ))],
    )
    .await;
    assert_eq!(
        p.store.idempotency_record(&scope, &key, now).await,
        Ok(Some(first.clone())),
        "the first record stays"
    );
    let other_scope = format!("{scope}-other");
    assert_eq!(
        p.store.idempotency_record(&other_scope, &key, now).await,
        Ok(None)
    );
    let elsewhere = record(&other_scope, &key, "elsewhere", now);
    commit(
        p.store.as_ref(),
        "the key in another scope",
        vec![Write::PutIdempotency(elsewhere.clone())],
    )
    .await;
    assert_eq!(
        p.store.idempotency_record(&other_scope, &key, now).await,
        Ok(Some(elsewhere))
    );
}

/// A change set that fails keeps no record, and a record that conflicts keeps none of the
/// change set's other writes.
pub async fn idempotency_record_all_or_nothing(p: &StorePorts) {
    let ws = workspace(p, "idem-atomic").await;
    let now = now_ms();
    let scope = ws.id.to_string();
    let key = format!("key-{}", unique());
    // Updating a contact that was never stored conflicts.
    let missing = contact(&ws.id, "missing", true, now);
    commit_conflicts(
        p.store.as_ref(),
        "record then a failing write",
        vec![
            Write::PutIdempotency(record(&scope, &key, "lost", now)),
            Write::UpdateContact(missing),
        ],
    )
    .await;
    assert_eq!(
        p.store.idempotency_record(&scope, &key, now).await,
        Ok(None)
    );

    let kept = record(&scope, &key, "kept", now);
    commit(
        p.store.as_ref(),
        "record",
        vec![Write::PutIdempotency(kept.clone())],
    )
    .await;
    let c = contact(&ws.id, "idem-rolled-back", true, now);
    commit_conflicts(
        p.store.as_ref(),
        "a contact with a taken key",
        vec![
            Write::InsertContact(c.clone()),
            Write::PutIdempotency(record(&scope, &key, "late", now)),
        ],
    )
    .await;
    assert_eq!(p.store.contact(&ws.id, &c.id).await, Ok(None));
    assert_eq!(
        p.store.idempotency_record(&scope, &key, now).await,
        Ok(Some(kept))
    );
}

/// An expired record is invisible, may be replaced, and is purged; unexpired ones stay.
pub async fn idempotency_records_expire_and_are_purged(p: &StorePorts) {
    let now = now_ms();
    let scope = format!("scope-{}", unique());
    let old = record(&scope, "old", "old", now);
    let young = record(&scope, "young", "young", secs(now, 30));
    commit(
        p.store.as_ref(),
        "two records",
        vec![
            Write::PutIdempotency(old.clone()),
            Write::PutIdempotency(young.clone()),
        ],
    )
    .await;
    let expiry = old.expires_at;
    assert_eq!(
        p.store
            .idempotency_record(&scope, "old", secs(expiry, -1))
            .await,
        Ok(Some(old.clone()))
    );
    assert_eq!(
        p.store.idempotency_record(&scope, "old", expiry).await,
        Ok(None)
    );

    let purged = p.store.purge_idempotency(expiry).await;
    assert!(
        matches!(purged, Ok(n) if n >= 1),
        "the expired record is purged: {purged:?}"
    );
    assert_eq!(
        p.store
            .idempotency_record(&scope, "old", secs(now, -1))
            .await,
        Ok(None),
        "purged, not only hidden"
    );
    assert_eq!(
        p.store.idempotency_record(&scope, "young", expiry).await,
        Ok(Some(young))
    );

    // A key whose record expired takes a new one.
    let reused = record(&scope, "young", "reused", secs(now, 90));
    commit(
        p.store.as_ref(),
        "the key after its expiry",
        vec![Write::PutIdempotency(reused.clone())],
    )
    .await;
    assert_eq!(
        p.store
            .idempotency_record(&scope, "young", secs(now, 90))
            .await,
        Ok(Some(reused))
    );
}
