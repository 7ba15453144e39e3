//! Job ids as keys: `EnqueueJob` of a known id conflicts, `EnqueueJobUnlessPending` keeps
//! at most one pending job per id (and replaces a dead one).

use std::time::Duration;

use posthorn_core::model::{ContactId, JobId};
use posthorn_core::ports::{JobPayload, JobStats, NewJob, Write};

use crate::fixtures::{commit, commit_conflicts, contact, job, now_ms, secs, workspace};
use crate::StorePorts;

const LEASE: Duration = Duration::from_secs(30);

fn stats(queued: u64, running: u64, dead: u64) -> JobStats {
    JobStats {
        queued,
        running,
        dead,
    }
}

/// `job` under another id.
fn with_id(mut job: NewJob, id: &JobId) -> NewJob {
    job.id = id.clone();
    job
}

/// A job with an id of its own that is the same at every call with `name` (as the minute
/// sweep's are).
fn keyed(ws: &posthorn_core::model::Workspace, name: &str) -> JobId {
    JobId::from(format!("keyed-{name}-{}", ws.id))
}

/// `EnqueueJob` of an id that a queued, running or dead job has, or that the same change
/// set enqueued before, fails the whole change set with `Conflict`; the job already there
/// is untouched.
pub async fn job_enqueue_of_known_id_conflicts(p: &StorePorts) {
    let ws = workspace(p, "job-id-taken").await;
    let now = now_ms();
    let first = job(&ws.id, now);
    commit(
        p.store.as_ref(),
        "enqueueing a job",
        vec![Write::EnqueueJob(first.clone())],
    )
    .await;
    let again = with_id(job(&ws.id, secs(now, -60)), &first.id);
    let bystander = contact(&ws.id, "bystander", true, now);
    commit_conflicts(
        p.store.as_ref(),
        "enqueueing a queued job's id again",
        vec![
            Write::InsertContact(bystander.clone()),
            Write::EnqueueJob(again.clone()),
        ],
    )
    .await;
    assert_eq!(
        p.store
            .contact(&ws.id, &bystander.id)
            .await
            .expect("contact read failed"),
        None,
        "a change set whose job id was taken was applied in part"
    );
    let twice = job(&ws.id, now);
    commit_conflicts(
        p.store.as_ref(),
        "enqueueing one id twice in a change set",
        vec![Write::EnqueueJob(twice.clone()), Write::EnqueueJob(twice)],
    )
    .await;
    assert_eq!(p.jobs.stats(now).await, Ok(stats(1, 0, 0)));

    let claimed = p.jobs.claim(now, LEASE, 10).await.expect("claim failed");
    assert_eq!(claimed.len(), 1);
    assert_eq!(
        claimed[0].payload, first.payload,
        "the first job was replaced"
    );
    commit_conflicts(
        p.store.as_ref(),
        "enqueueing a running job's id again",
        vec![Write::EnqueueJob(again.clone())],
    )
    .await;
    assert_eq!(p.jobs.dead_letter(&claimed[0], "hopeless").await, Ok(true));
    commit_conflicts(
        p.store.as_ref(),
        "enqueueing a dead job's id again",
        vec![Write::EnqueueJob(again)],
    )
    .await;
    assert_eq!(p.jobs.stats(now).await, Ok(stats(0, 0, 1)));
}

/// `EnqueueJobUnlessPending` writes nothing while a job with its id is queued or running
/// (or was enqueued earlier in the change set), without failing the change set; once the
/// job completes, the id is free and the next one is enqueued.
pub async fn job_enqueue_unless_pending_keeps_one(p: &StorePorts) {
    let ws = workspace(p, "job-id-pending").await;
    let now = now_ms();
    let id = keyed(&ws, "pending");
    let first = with_id(job(&ws.id, now), &id);
    commit(
        p.store.as_ref(),
        "enqueueing a keyed job twice in one change set",
        vec![
            Write::EnqueueJobUnlessPending(first.clone()),
            Write::EnqueueJobUnlessPending(with_id(job(&ws.id, now), &id)),
        ],
    )
    .await;
    let bystander = contact(&ws.id, "bystander", true, now);
    commit(
        p.store.as_ref(),
        "enqueueing a queued keyed job again, beside a contact",
        vec![
            Write::EnqueueJobUnlessPending(with_id(job(&ws.id, secs(now, -60)), &id)),
            Write::InsertContact(bystander.clone()),
        ],
    )
    .await;
    assert!(
        p.store
            .contact(&ws.id, &bystander.id)
            .await
            .expect("contact read failed")
            .is_some(),
        "a pending keyed job made the rest of its change set fail"
    );
    assert_eq!(p.jobs.stats(now).await, Ok(stats(1, 0, 0)));

    let claimed = p.jobs.claim(now, LEASE, 10).await.expect("claim failed");
    assert_eq!(claimed.len(), 1, "one keyed job is queued");
    assert_eq!(
        claimed[0].payload, first.payload,
        "the first job was replaced"
    );
    commit(
        p.store.as_ref(),
        "enqueueing a running keyed job again",
        vec![Write::EnqueueJobUnlessPending(with_id(
            job(&ws.id, now),
            &id,
        ))],
    )
    .await;
    assert_eq!(p.jobs.stats(now).await, Ok(stats(0, 1, 0)));
    // A lapsed lease is still pending: the job will be claimed again.
    let lapsed = secs(now, 60);
    commit(
        p.store.as_ref(),
        "enqueueing a keyed job whose lease lapsed",
        vec![Write::EnqueueJobUnlessPending(with_id(
            job(&ws.id, now),
            &id,
        ))],
    )
    .await;
    assert_eq!(p.jobs.stats(lapsed).await, Ok(stats(1, 0, 0)));

    assert_eq!(p.jobs.complete(&claimed[0]).await, Ok(true));
    let next = with_id(job(&ws.id, now), &id);
    commit(
        p.store.as_ref(),
        "enqueueing a completed keyed job again",
        vec![Write::EnqueueJobUnlessPending(next.clone())],
    )
    .await;
    let claimed = p.jobs.claim(now, LEASE, 10).await.expect("claim failed");
    assert_eq!(claimed.len(), 1, "a completed keyed job is enqueued again");
    assert_eq!(claimed[0].payload, next.payload);
}

/// `EnqueueJobUnlessPending` over a dead job of its id replaces it: the new payload and
/// due time, no attempts, not dead any more.
pub async fn job_enqueue_unless_pending_replaces_dead(p: &StorePorts) {
    let ws = workspace(p, "job-id-dead").await;
    let now = now_ms();
    let id = keyed(&ws, "dead");
    commit(
        p.store.as_ref(),
        "enqueueing a keyed job",
        vec![Write::EnqueueJobUnlessPending(with_id(
            job(&ws.id, now),
            &id,
        ))],
    )
    .await;
    let claimed = p.jobs.claim(now, LEASE, 1).await.expect("claim failed");
    assert_eq!(claimed.len(), 1);
    assert_eq!(
        p.jobs.retry(&claimed[0], now, true, "first failure").await,
        Ok(true)
    );
    let claimed = p.jobs.claim(now, LEASE, 1).await.expect("claim failed");
    assert_eq!(claimed[0].attempts, 1);
    assert_eq!(p.jobs.dead_letter(&claimed[0], "hopeless").await, Ok(true));

    let fresh = NewJob {
        id: id.clone(),
        payload: JobPayload::ReevaluateContact {
            workspace_id: ws.id.clone(),
            contact_id: ContactId::from("replacement"),
        },
        run_at: secs(now, 10),
    };
    commit(
        p.store.as_ref(),
        "enqueueing a dead keyed job again",
        vec![Write::EnqueueJobUnlessPending(fresh.clone())],
    )
    .await;
    assert_eq!(p.jobs.stats(now).await, Ok(stats(1, 0, 0)));
    assert_eq!(p.jobs.dead_job(&id).await, Ok(None), "the dead job stayed");
    assert!(
        p.jobs
            .claim(now, LEASE, 1)
            .await
            .expect("claim failed")
            .is_empty(),
        "the replacement kept the dead job's due time"
    );
    let claimed = p
        .jobs
        .claim(secs(now, 10), LEASE, 1)
        .await
        .expect("claim failed");
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].payload, fresh.payload);
    assert_eq!((claimed[0].attempts, claimed[0].claims), (0, 1));
}

/// Concurrent commits of `EnqueueJobUnlessPending` with one id (workers sweeping at the
/// same minute) all succeed and leave one job.
pub async fn job_enqueue_unless_pending_concurrently_one_job(p: &StorePorts) {
    let ws = workspace(p, "job-id-race").await;
    let now = now_ms();
    let id = keyed(&ws, "race");
    let commits: Vec<_> = (0..8)
        .map(|_| {
            let store = p.store.clone();
            let job = with_id(job(&ws.id, now), &id);
            tokio::spawn(async move {
                store
                    .commit(posthorn_core::ports::ChangeSet {
                        writes: vec![Write::EnqueueJobUnlessPending(job)],
                    })
                    .await
            })
        })
        .collect();
    for handle in commits {
        let outcome = handle.await.expect("a commit panicked");
        assert_eq!(outcome, Ok(()), "a concurrent keyed enqueue failed");
    }
    assert_eq!(p.jobs.stats(now).await, Ok(stats(1, 0, 0)));
}
