//! Lease renewal (`Jobs::extend`): the heartbeat of a job that runs longer than one lease.

use std::time::Duration;

use posthorn_core::ports::{ClaimedJob, JobStats, NewJob, Write};

use crate::fixtures::{commit, job, now_ms, secs, workspace};
use crate::StorePorts;

const LEASE: Duration = Duration::from_secs(30);

async fn enqueue(p: &StorePorts, jobs: &[NewJob]) {
    commit(
        p.store.as_ref(),
        "enqueueing jobs",
        jobs.iter().cloned().map(Write::EnqueueJob).collect(),
    )
    .await;
}

async fn claim(p: &StorePorts, at: chrono::DateTime<chrono::Utc>) -> Vec<ClaimedJob> {
    p.jobs.claim(at, LEASE, 10).await.expect("claim failed")
}

async fn claim_one(p: &StorePorts, at: chrono::DateTime<chrono::Utc>) -> ClaimedJob {
    let mut claimed = claim(p, at).await;
    assert_eq!(claimed.len(), 1, "expected one claimable job at {at}");
    claimed.remove(0)
}

/// Extending a live lease moves its end to `now + lease`: the job stays running and
/// unclaimable past the original end, keeps its token (it still completes), and becomes
/// claimable when the renewed lease runs out.
pub async fn job_extend_keeps_lease_past_original_end(p: &StorePorts) {
    let ws = workspace(p, "extend").await;
    let now = now_ms();
    enqueue(p, &[job(&ws.id, now)]).await;
    let claimed = claim_one(p, now).await;

    assert_eq!(
        p.jobs.extend(&claimed, secs(now, 20), LEASE).await,
        Ok(true),
        "extending a live lease"
    );
    assert!(
        claim(p, secs(now, 30)).await.is_empty(),
        "claimed at the original lease end although it was extended"
    );
    assert!(
        claim(p, secs(now, 49)).await.is_empty(),
        "claimed in the renewed lease's last second"
    );
    assert_eq!(
        p.jobs.stats(secs(now, 49)).await,
        Ok(JobStats {
            queued: 0,
            running: 1,
            dead: 0
        }),
        "stats within the renewed lease"
    );
    // A second beat renews it again, from its own `now`.
    assert_eq!(
        p.jobs.extend(&claimed, secs(now, 40), LEASE).await,
        Ok(true),
        "extending again"
    );
    assert!(
        claim(p, secs(now, 69)).await.is_empty(),
        "claimed within the lease renewed a second time"
    );
    assert_eq!(
        p.jobs.complete(&claimed).await,
        Ok(true),
        "an extended lease keeps its token"
    );
    assert!(
        claim(p, secs(now, 86_400)).await.is_empty(),
        "a completed job came back"
    );

    // Not renewed: claimable when the renewed lease ends, with a new token.
    enqueue(p, &[job(&ws.id, now)]).await;
    let first = claim_one(p, now).await;
    assert_eq!(p.jobs.extend(&first, secs(now, 10), LEASE).await, Ok(true));
    assert!(claim(p, secs(now, 39)).await.is_empty());
    let again = claim_one(p, secs(now, 40)).await;
    assert_eq!(again.id, first.id);
    assert_eq!(
        again.claims, 2,
        "the lapsed renewed lease counts as a claim"
    );
    assert_eq!(p.jobs.complete(&again).await, Ok(true));
}

/// A token whose lease ran out and was claimed again, or that never was a lease, cannot
/// extend: `Ok(false)`, and the current claim's lease is unchanged.
pub async fn job_extend_with_stale_token_changes_nothing(p: &StorePorts) {
    let ws = workspace(p, "extend-stale").await;
    let now = now_ms();
    enqueue(p, &[job(&ws.id, now)]).await;
    let first = claim_one(p, now).await;
    let second = claim_one(p, secs(now, 30)).await;
    assert_ne!(second.lease_token, first.lease_token);

    assert_eq!(
        p.jobs.extend(&first, secs(now, 50), LEASE).await,
        Ok(false),
        "extending with the token of a lease claimed again"
    );
    let forged = ClaimedJob {
        lease_token: uuid::Uuid::new_v4().to_string(),
        ..second.clone()
    };
    assert_eq!(
        p.jobs.extend(&forged, secs(now, 50), LEASE).await,
        Ok(false),
        "extending with a forged token"
    );
    let unknown = ClaimedJob {
        id: crate::fixtures::fresh_id(),
        ..second.clone()
    };
    assert_eq!(
        p.jobs.extend(&unknown, secs(now, 50), LEASE).await,
        Ok(false),
        "extending a job that does not exist"
    );
    // The second claim's lease still ends at now + 60: the stale extends did not move it.
    let third = claim_one(p, secs(now, 60)).await;
    assert_eq!(third.id, first.id);
    assert_eq!(
        p.jobs.extend(&second, secs(now, 61), LEASE).await,
        Ok(false),
        "extending the lease a third claim took over"
    );
    assert_eq!(p.jobs.complete(&third).await, Ok(true));
}

/// A settled job (completed, retried or dead-lettered) cannot be extended, and the attempt
/// changes nothing: a retried job stays queued for its `at`, a dead one stays dead.
pub async fn job_extend_of_settled_job_is_refused(p: &StorePorts) {
    let ws = workspace(p, "extend-settled").await;
    let now = now_ms();
    enqueue(p, &[job(&ws.id, now), job(&ws.id, now), job(&ws.id, now)]).await;
    let claimed = claim(p, now).await;
    assert_eq!(claimed.len(), 3);
    let (done, retried, dead) = (&claimed[0], &claimed[1], &claimed[2]);

    assert_eq!(p.jobs.complete(done).await, Ok(true));
    assert_eq!(
        p.jobs.extend(done, secs(now, 1), LEASE).await,
        Ok(false),
        "extending a completed job"
    );

    assert_eq!(
        p.jobs.retry(retried, secs(now, 5), false, "later").await,
        Ok(true)
    );
    assert_eq!(
        p.jobs.extend(retried, secs(now, 1), LEASE).await,
        Ok(false),
        "extending a retried job"
    );

    assert_eq!(p.jobs.dead_letter(dead, "no").await, Ok(true));
    assert_eq!(
        p.jobs.extend(dead, secs(now, 1), LEASE).await,
        Ok(false),
        "extending a dead-lettered job"
    );

    assert_eq!(
        p.jobs.stats(secs(now, 1)).await,
        Ok(JobStats {
            queued: 1,
            running: 0,
            dead: 1
        }),
        "a refused extend changed state"
    );
    let again = claim_one(p, secs(now, 5)).await;
    assert_eq!(again.id, retried.id, "the retried job is due at its `at`");
    assert_eq!(p.jobs.complete(&again).await, Ok(true));
}
