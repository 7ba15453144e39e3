//! The record of processed SNS messages: recorded once, deployment-wide, and rolled back
//! with the change set it came in.

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
