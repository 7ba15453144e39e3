//! The minute sweep of time-based segments: at most one of its re-syncs pending per segment,
//! however often it runs; a re-sync queued for another cause is queued besides.

use std::time::Duration;

use posthorn_core::app::membership::sweep_job_id;
use posthorn_core::model::SegmentId;
use posthorn_core::ports::{ClaimedJob, Clock, JobPayload};
use serde_json::json;

use crate::harness::TestApp;

const LEASE: Duration = Duration::from_secs(300);

/// A tracked segment whose condition uses time, with its first snapshot taken.
async fn time_based_segment(app: &TestApp) -> SegmentId {
    let cond = json!({"groups": [{"filters": [{"field": "event.login", "operator": "triggeredWithin", "value": 1, "unit": "hours"}]}]});
    let res = app
        .post(
            "/segments",
            json!({"name": "Active", "condition": cond, "trackMembership": true}),
        )
        .await
        .expect(201);
    app.run_jobs().await;
    SegmentId::from(res.body["id"].as_str().expect("id"))
}

async fn sweep(app: &TestApp) {
    app.engine
        .sweep_time_based_segments(&app.ws())
        .await
        .expect("sweep");
}

/// Claims every due job; returns the re-syncs of `segment` among them and puts the other
/// jobs back as they were.
async fn claim_syncs(app: &TestApp, segment: &SegmentId) -> Vec<ClaimedJob> {
    let now = app.clock.now();
    let claimed = app
        .engine
        .jobs
        .claim(now, LEASE, 1000)
        .await
        .expect("claim");
    let mut syncs = Vec::new();
    for job in claimed {
        match &job.payload {
            JobPayload::SyncSegment { segment_id, .. } if segment_id == segment => syncs.push(job),
            _ => {
                let back = app.engine.jobs.retry(&job, now, false, "").await;
                assert_eq!(back, Ok(true), "putting back {:?}", job.payload);
            }
        }
    }
    syncs
}

#[tokio::test]
async fn the_sweep_keeps_one_resync_pending_per_segment() {
    let app = TestApp::new().await;
    let segment = time_based_segment(&app).await;
    let sweep_id = sweep_job_id(&app.ws(), &segment);

    sweep(&app).await;
    sweep(&app).await;
    let syncs = claim_syncs(&app, &segment).await;
    let ids: Vec<_> = syncs.iter().map(|j| j.id.clone()).collect();
    assert_eq!(
        ids,
        std::slice::from_ref(&sweep_id),
        "two sweeps in a row queue one re-sync"
    );

    // Running (a re-sync longer than a minute, or another worker's sweep meanwhile).
    sweep(&app).await;
    assert!(
        claim_syncs(&app, &segment).await.is_empty(),
        "a sweep queued a second re-sync while one ran"
    );

    assert_eq!(app.engine.jobs.complete(&syncs[0]).await, Ok(true));
    sweep(&app).await;
    let again = claim_syncs(&app, &segment).await;
    assert_eq!(
        again.iter().map(|j| j.id.clone()).collect::<Vec<_>>(),
        [sweep_id],
        "once the re-sync is done the next sweep queues one again"
    );
    assert_eq!(app.engine.jobs.complete(&again[0]).await, Ok(true));
}

#[tokio::test]
async fn a_changed_condition_resyncs_beside_a_pending_sweep() {
    let app = TestApp::new().await;
    let segment = time_based_segment(&app).await;
    sweep(&app).await;
    let cond = json!({"groups": [{"filters": [{"field": "event.login", "operator": "triggeredWithin", "value": 2, "unit": "hours"}]}]});
    app.patch(&format!("/segments/{segment}"), json!({"condition": cond}))
        .await
        .expect(200);
    sweep(&app).await;
    let syncs = claim_syncs(&app, &segment).await;
    let sweep_id = sweep_job_id(&app.ws(), &segment);
    assert_eq!(
        syncs.len(),
        2,
        "one re-sync for the sweep (not two), one for the changed condition (not swallowed)"
    );
    assert_eq!(
        syncs.iter().filter(|j| j.id == sweep_id).count(),
        1,
        "one of them is the sweep's"
    );
    for job in &syncs {
        assert_eq!(app.engine.jobs.complete(job).await, Ok(true));
    }
}
