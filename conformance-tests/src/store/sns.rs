//! The record of processed SNS messages: recorded once, deployment-wide, and rolled back
//! with the change set it came in.

use chrono::TimeDelta;
use posthorn_core::model::{EmailId, EmailStatus};
use posthorn_core::ports::Write;

use crate::fixtures::{
    commit, commit_conflicts, email_record, insert_contact, now_ms, unique, workspace,
};
use crate::StorePorts;

/// A message id is unseen until recorded; a second record conflicts and changes nothing
/// else of its change set; a failed change set does not record it.
pub async fn sns_message_recorded_once(p: &StorePorts) {
    let id = format!("sns-{}", unique());
    let other = format!("sns-{}", unique());
    let now = now_ms();
    assert_eq!(p.store.sns_message_seen(&id).await, Ok(false));
    let record = |message_id: &str| Write::RecordSnsMessage {
        message_id: message_id.to_owned(),
        processed_at: now,
    };
    commit(p.store.as_ref(), "record", vec![record(&id)]).await;
    assert_eq!(p.store.sns_message_seen(&id).await, Ok(true));
    assert_eq!(p.store.sns_message_seen(&other).await, Ok(false));

    // A redelivery's change set: its record conflicts, so its email update is not kept.
    let ws = workspace(p, "sns").await;
    let contact = insert_contact(p, &ws.id, "sns", true, now).await;
    let mail = email_record(&contact, now);
    commit(
        p.store.as_ref(),
        "email",
        vec![Write::InsertEmail(mail.clone())],
    )
    .await;
    let mut delivered = mail.clone();
    delivered.status = EmailStatus::Delivered;
    commit_conflicts(
        p.store.as_ref(),
        "second record",
        vec![Write::UpdateEmail(delivered.clone()), record(&id)],
    )
    .await;
    let stored = p.store.email(&ws.id, &mail.id).await.expect("read");
    assert_eq!(stored.map(|e| e.status), Some(mail.status));

    // A change set that fails after its record leaves the message unseen.
    let mut gone = mail.clone();
    gone.id = EmailId::from(format!("missing-{}", unique()).as_str());
    commit_conflicts(
        p.store.as_ref(),
        "record then a failing update",
        vec![record(&other), Write::UpdateEmail(gone)],
    )
    .await;
    assert_eq!(p.store.sns_message_seen(&other).await, Ok(false));
}

/// The purge deletes the records processed before its cut-off (they read as unseen again)
/// and keeps the others. Far in the past, so the records of other tests stay.
pub async fn sns_messages_purged_by_age(p: &StorePorts) {
    let now = now_ms();
    let old = format!("sns-old-{}", unique());
    let kept = format!("sns-kept-{}", unique());
    for (id, days) in [(&old, 400), (&kept, 300)] {
        commit(
            p.store.as_ref(),
            "record",
            vec![Write::RecordSnsMessage {
                message_id: id.clone(),
                processed_at: now - TimeDelta::days(days),
            }],
        )
        .await;
    }
    let purged = p
        .store
        .purge_sns_messages(now - TimeDelta::days(350))
        .await
        .expect("purge");
    assert!(purged >= 1, "the 400-day-old record is purged");
    assert_eq!(p.store.sns_message_seen(&old).await, Ok(false));
    assert_eq!(p.store.sns_message_seen(&kept).await, Ok(true));
    // Once purged, the message can be recorded again.
    commit(
        p.store.as_ref(),
        "record again",
        vec![Write::RecordSnsMessage {
            message_id: old.clone(),
            processed_at: now,
        }],
    )
    .await;
    assert_eq!(p.store.sns_message_seen(&old).await, Ok(true));
}
