//! The facts the store keeps in memory per workspace (tracked segments, workflow interest)
//! follow a commit even when its caller stopped waiting for it: the change set commits once
//! its group started, so what it made stale must be forgotten all the same.

use std::time::Duration;

use posthorn_core::model::{Segment, SegmentId, SegmentType};
use posthorn_core::ports::{Store, Write};
use posthorn_core::segment::parse_condition;
use posthorn_sqlite::testing;
use serde_json::json;

use super::{changes, now, workspace};

fn tracked_segment(ws: &posthorn_core::model::WorkspaceId) -> Segment {
    let condition = json!({"groups": [{"filters": [{"field": "data.plan", "operator": "equals", "value": "pro"}]}]});
    Segment {
        id: SegmentId::generate(&posthorn_core::ports::SystemClock),
        workspace_id: ws.clone(),
        name: "Pro".into(),
        description: None,
        segment_type: SegmentType::Dynamic,
        condition: Some(parse_condition(&condition, "condition").expect("condition")),
        track_membership: true,
        created_at: now(),
        updated_at: now(),
        tracking_since: Some(now()),
        members_synced: false,
    }
}

#[tokio::test]
async fn kept_facts_follow_a_commit_whose_caller_stopped_waiting() {
    let store = testing::temporary().await.expect("store");
    let ws = workspace();
    store
        .commit(changes(vec![Write::PutWorkspace(ws.clone())]))
        .await
        .expect("workspace");
    // Read once, so the store keeps "no tracked segment" for the workspace.
    assert_eq!(store.tracked_segments(&ws.id).await.expect("read"), vec![]);

    let segment = tracked_segment(&ws.id);
    let mut commit = Box::pin(store.commit(changes(vec![Write::PutSegment(segment.clone())])));
    // Poll once: the change set is handed to the committer.
    tokio::select! {
        biased;
        _ = &mut commit => panic!("a commit cannot answer before its group ran"),
        () = std::future::ready(()) => {}
    }
    let mut stored = false;
    for _ in 0..400 {
        if store
            .segment(&ws.id, &segment.id)
            .await
            .expect("read")
            .is_some()
        {
            stored = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(stored, "the change set committed");
    // The caller gives up now (a request's time limit, a client gone).
    drop(commit);

    let mut tracked = Vec::new();
    for _ in 0..400 {
        tracked = store.tracked_segments(&ws.id).await.expect("read");
        if !tracked.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(
        tracked.iter().map(|s| &s.id).collect::<Vec<_>>(),
        [&segment.id],
        "the kept tracked segments must follow the commit"
    );
}
