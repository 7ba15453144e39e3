//! SCHEDULE triggers: ticks enrol the segment's members, once each without re-entry.

use posthorn_core::app::segments::CreateSegment;
use posthorn_core::app::workflows::{CreateWorkflow, WorkflowPatch};
use posthorn_core::model::SegmentType;
use posthorn_core::workflow::Trigger;
use serde_json::json;

use crate::harness::World;

#[tokio::test]
async fn each_tick_enrols_the_members_and_disabling_stops_the_ticks() {
    let w = World::new().await;
    for i in 0..5 {
        w.contact(&format!("vip{i}@example.org"), json!({"vip": true}))
            .await;
    }
    w.contact("plain@example.org", json!({})).await;
    let condition = serde_json::from_value(json!({
        "logic": "AND",
        "groups": [{"filters": [{"field": "data.vip", "operator": "equals", "value": true}]}]
    }))
    .expect("condition");
    let segment = w
        .engine
        .create_segment(
            &w.caller,
            CreateSegment {
                name: "VIP".into(),
                description: None,
                segment_type: SegmentType::Dynamic,
                condition: Some(condition),
                track_membership: false,
            },
        )
        .await
        .expect("segment");
    let view = w
        .engine
        .create_workflow(
            &w.caller,
            CreateWorkflow {
                enabled: true,
                ..CreateWorkflow::new(
                    "Hourly",
                    Trigger::Schedule {
                        cron: "0 * * * *".into(),
                        timezone: None,
                        segment_id: segment.segment.id.clone(),
                    },
                )
            },
        )
        .await
        .expect("workflow");
    w.run().await;
    assert!(
        w.executions(&view).await.is_empty(),
        "nothing before the first tick"
    );
    w.after(chrono::Duration::hours(1)).await;
    let first = w.executions(&view).await;
    assert_eq!(first.len(), 5, "every member, in batches of 2");
    // Without re-entry the next tick enrols nobody again.
    w.after(chrono::Duration::hours(1)).await;
    assert_eq!(w.executions(&view).await.len(), 5);

    // With re-entry, each tick enrols them again; disabling stops the ticks.
    w.engine
        .patch_workflow(
            &w.caller,
            &view.workflow.id,
            WorkflowPatch {
                allow_reentry: Some(true),
                ..WorkflowPatch::default()
            },
        )
        .await
        .expect("patched");
    w.after(chrono::Duration::hours(1)).await;
    assert_eq!(w.executions(&view).await.len(), 10);
    // The patch retired the old chain of ticks: exactly one tick is planned.
    let stats = w.engine.jobs.stats(w.now()).await.expect("stats");
    assert_eq!(stats.queued, 1, "{stats:?}");
    w.engine
        .patch_workflow(
            &w.caller,
            &view.workflow.id,
            WorkflowPatch {
                enabled: Some(false),
                ..WorkflowPatch::default()
            },
        )
        .await
        .expect("disabled");
    w.after(chrono::Duration::hours(3)).await;
    assert_eq!(w.executions(&view).await.len(), 10);
    let stats = w.engine.jobs.stats(w.now()).await.expect("stats");
    assert_eq!(
        stats.queued, 0,
        "a disabled workflow's ticks stop: {stats:?}"
    );
}

#[tokio::test]
async fn a_segment_entry_event_starts_a_workflow() {
    let w = World::new().await;
    let condition = serde_json::from_value(json!({
        "logic": "AND",
        "groups": [{"filters": [{"field": "data.plan", "operator": "equals", "value": "pro"}]}]
    }))
    .expect("condition");
    w.engine
        .create_segment(
            &w.caller,
            CreateSegment {
                name: "Pro Users".into(),
                description: None,
                segment_type: SegmentType::Dynamic,
                condition: Some(condition),
                track_membership: true,
            },
        )
        .await
        .expect("segment");
    w.run().await;
    let wf = w.event_workflow("segment.pro-users.entry", false).await;
    let contact = w.contact("pro@example.org", json!({"plan": "pro"})).await;
    w.run().await;
    let executions = w.executions(&wf).await;
    assert_eq!(executions.len(), 1, "the entry event reached the workflow");
    assert_eq!(executions[0].contact_id, contact.id);
    assert_eq!(executions[0].event["segmentName"], json!("Pro Users"));
}
