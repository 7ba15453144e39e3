//! Segment and campaign storage details: conditions read back exactly, memberships follow
//! contact and segment deletion, the campaign/contact uniqueness of emails.

use posthorn_conformance::fixtures;
use posthorn_core::model::{SegmentType, SourceType};
use posthorn_core::ports::{Store, StoreError, Write};
use posthorn_core::segment::{parse_condition, Condition};
use serde_json::json;

use super::{changes, contact, now, workspace};
use crate::support;

/// A condition with numbers that a jsonb round trip would rewrite (`1e300` comes back as
/// 301 digits) and keys in non-sorted order.
fn awkward_condition() -> Condition {
    parse_condition(
        &json!({"logic": "or", "groups": [
            {"filters": [
                {"field": "data.z", "operator": "greaterThan", "value": 1e300},
                {"field": "data.a", "operator": "equals", "value": 0.30000000000000004},
                {"field": "event.x", "operator": "triggeredWithin", "value": 1.5, "unit": "HOURS"}
            ], "conditions": {"groups": []}},
            {}
        ]}),
        "condition",
    )
    .expect("valid condition")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conditions_read_back_equal() {
    let (store, db) = support::fresh().await;
    let ws = workspace();
    let mut segment = fixtures::segment(&ws.id, "odd", SegmentType::Dynamic, true, now());
    segment.condition = Some(awkward_condition());
    let mut campaign = fixtures::campaign(&ws.id, "odd", now());
    campaign.audience_condition = Some(awkward_condition());
    store
        .commit(changes(vec![
            Write::PutSegment(segment.clone()),
            Write::InsertCampaign(campaign.clone()),
        ]))
        .await
        .expect("store");
    assert_eq!(
        store.segment(&ws.id, &segment.id).await.expect("read"),
        Some(segment)
    );
    assert_eq!(
        store.campaign(&ws.id, &campaign.id).await.expect("read"),
        Some(campaign)
    );
    support::finish(store, db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memberships_go_with_their_contact_or_segment() {
    let (store, db) = support::fresh().await;
    let ws = workspace();
    let kept = contact(&ws.id, "kept@example.com");
    let gone = contact(&ws.id, "gone@example.com");
    let a = fixtures::segment(&ws.id, "a", SegmentType::Static, false, now());
    let b = fixtures::segment(&ws.id, "b", SegmentType::Static, false, now());
    let mut writes = vec![
        Write::InsertContact(kept.clone()),
        Write::InsertContact(gone.clone()),
        Write::PutSegment(a.clone()),
        Write::PutSegment(b.clone()),
    ];
    for s in [&a, &b] {
        for c in [&kept, &gone] {
            writes.push(fixtures::add_member(&ws.id, &s.id, &c.id));
        }
    }
    store.commit(changes(writes)).await.expect("store");
    store
        .commit(changes(vec![
            Write::DeleteContact {
                workspace_id: ws.id.clone(),
                id: gone.id.clone(),
            },
            Write::DeleteSegment {
                workspace_id: ws.id.clone(),
                id: b.id.clone(),
            },
        ]))
        .await
        .expect("delete");
    let (rows,): (i64,) = sqlx::query_as("SELECT count(*) FROM segment_members")
        .fetch_one(&mut support::raw(&store).await)
        .await
        .expect("count");
    assert_eq!(rows, 1, "only (a, kept) is left");
    assert_eq!(
        store.segment_member_ids(&ws.id, &a.id, None, 10).await,
        Ok(vec![kept.id.clone()])
    );
    assert_eq!(store.segment_member_count(&ws.id, &b.id).await, Ok(0));
    support::finish(store, db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_campaign_email_per_contact() {
    let (store, db) = support::fresh().await;
    let ws = workspace();
    let c = contact(&ws.id, "once@example.com");
    let first = fixtures::campaign_email(&c, "camp", now());
    let second = fixtures::campaign_email(&c, "camp", now());
    let other_campaign = fixtures::campaign_email(&c, "camp-2", now());
    let mut plain = fixtures::email_record(&c, now());
    plain.source_type = SourceType::Transactional;
    let plain_again = fixtures::email_record(&c, now());
    store
        .commit(changes(vec![
            Write::InsertContact(c.clone()),
            Write::InsertEmail(first),
            Write::InsertEmail(other_campaign),
            Write::InsertEmail(plain),
            Write::InsertEmail(plain_again),
        ]))
        .await
        .expect("emails without a campaign never clash");
    let result = store
        .commit(changes(vec![Write::InsertEmail(second)]))
        .await;
    assert!(
        matches!(result, Err(StoreError::Conflict(_))),
        "got {result:?}"
    );
    let counts = store
        .campaign_email_counts(&ws.id, "camp")
        .await
        .expect("counts");
    assert_eq!(counts.queued, 1);
    support::finish(store, db).await;
}
