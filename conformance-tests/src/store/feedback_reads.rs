//! What recording feedback about an email reads first (`Store::feedback_reads`).

use posthorn_core::model::{EmailId, SegmentType};
use posthorn_core::ports::{Store, Write};
use posthorn_core::workflow::Trigger;

use super::workflows::{every_action, put_workflow};
use crate::fixtures::{
    commit, email_record, execution, insert_contact, now_ms, segment, step, waiting_for, workflow,
    workflow_with, workspace,
};
use crate::StorePorts;

/// Asserts that `feedback_reads` of `id` answers what `email_without_content`,
/// `tracked_segments` and `has_event_interest` answer one by one, for every event name
/// feedback stores and one no workflow uses; returns how many of the names concern a
/// workflow.
async fn equal_one_by_one(
    s: &dyn Store,
    ws: &posthorn_core::model::WorkspaceId,
    id: &EmailId,
    stage: &str,
) -> usize {
    let mut interested = 0;
    for name in ["email.open", "email.click", "email.bounce", "nothing.here"] {
        let reads = s
            .feedback_reads(ws, id, name)
            .await
            .unwrap_or_else(|e| panic!("{stage}: feedback_reads({name}) failed: {e}"));
        let email = s.email_without_content(ws, id).await;
        assert_eq!(Ok(reads.email.clone()), email, "{stage}: {name}");
        let Some(email) = reads.email else {
            assert_eq!(
                (reads.tracked_segments, reads.event_interest),
                (vec![], false),
                "{stage}: no email, nothing else read"
            );
            continue;
        };
        let tracked = s.tracked_segments(ws).await;
        assert_eq!(Ok(reads.tracked_segments), tracked, "{stage}: {name}");
        let interest = s.has_event_interest(ws, name, &email.contact_id).await;
        assert_eq!(Ok(reads.event_interest), interest, "{stage}: {name}");
        interested += usize::from(reads.event_interest);
    }
    interested
}

/// `feedback_reads` answers what the three reads answer one by one: for an unknown email
/// and another workspace's (nothing, and nothing else), for an email in an empty
/// workspace, then with another workspace's tracked segment and workflow (not this
/// one's), with a tracked segment and a workflow on `email.open`, and with an execution
/// of the email's contact waiting for `email.click` (and not for another contact's).
pub async fn feedback_reads_equal_the_reads_one_by_one(p: &StorePorts) {
    let ws = workspace(p, "feedback-reads").await;
    let other_ws = workspace(p, "feedback-reads-other").await;
    let now = now_ms();
    let s = p.store.as_ref();
    let alice = insert_contact(p, &ws.id, "feedback-alice", true, now).await;
    let bob = insert_contact(p, &ws.id, "feedback-bob", true, now).await;
    let mail = email_record(&alice, now);
    let to_bob = email_record(&bob, now);
    commit(
        s,
        "two emails",
        vec![
            Write::InsertEmail(mail.clone()),
            Write::InsertEmail(to_bob.clone()),
        ],
    )
    .await;
    let unknown = EmailId::from("no-such-email");
    assert_eq!(equal_one_by_one(s, &ws.id, &unknown, "unknown id").await, 0);
    assert_eq!(
        equal_one_by_one(s, &other_ws.id, &mail.id, "other workspace").await,
        0
    );
    assert_eq!(equal_one_by_one(s, &ws.id, &mail.id, "empty").await, 0);
    let reads = s.feedback_reads(&ws.id, &mail.id, "email.open").await;
    assert_eq!(
        reads.map(|r| (r.email, r.tracked_segments.len(), r.event_interest)),
        Ok((Some(mail.without_content()), 0, false))
    );

    commit(
        s,
        "another workspace's tracked segment",
        vec![Write::PutSegment(segment(
            &other_ws.id,
            "foreign",
            SegmentType::Dynamic,
            true,
            now,
        ))],
    )
    .await;
    put_workflow(p, &workflow(&other_ws.id, "foreign", "email.open", now)).await;
    assert_eq!(equal_one_by_one(s, &ws.id, &mail.id, "foreign").await, 0);

    let tracked = segment(&ws.id, "tracked", SegmentType::Dynamic, true, now);
    commit(s, "a tracked segment", vec![Write::PutSegment(tracked)]).await;
    put_workflow(p, &workflow(&ws.id, "on open", "email.open", now)).await;
    assert_eq!(equal_one_by_one(s, &ws.id, &mail.id, "on open").await, 1);
    let reads = s.feedback_reads(&ws.id, &mail.id, "email.open").await;
    assert_eq!(
        reads.map(|r| (r.tracked_segments.len(), r.event_interest)),
        Ok((1, true))
    );

    let manual = workflow_with(&ws.id, "manual", Trigger::Manual {}, now);
    put_workflow(p, &manual).await;
    let wait = step(&manual, "wait", every_action()[5].clone(), now);
    let run = execution(&manual, &alice.id, now);
    commit(
        s,
        "an execution of alice's waiting for `email.click`",
        vec![
            Write::PutStep(wait.clone()),
            Write::InsertExecution(waiting_for(run, &wait.id, "email.click")),
        ],
    )
    .await;
    assert_eq!(equal_one_by_one(s, &ws.id, &mail.id, "waiting").await, 2);
    assert_eq!(
        equal_one_by_one(s, &ws.id, &to_bob.id, "bob waits for nothing").await,
        1
    );
    let click = s.feedback_reads(&ws.id, &mail.id, "email.click").await;
    assert_eq!(click.map(|r| r.event_interest), Ok(true));
}
