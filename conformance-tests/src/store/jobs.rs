//! The job queue fed by commits: due times, exclusive claims, leases, retries, dead letters.

use posthorn_core::model::JobId;
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use posthorn_core::ports::{ClaimedJob, DeadJob, JobStats, Jobs, NewJob, Write};

use crate::fixtures::{commit, job, now_ms, secs, workspace};
use crate::StorePorts;

const LEASE: Duration = Duration::from_secs(30);

/// Polls `future` once, without waiting: `Pending` unless it is done.
pub(super) async fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut *future).poll(cx))).await
}

/// A worker in `wait_for_work` with a timeout far beyond any deadline of a check (only a
/// wake-up ends it in time), polled once here so that it is waiting, not merely created,
/// before anything else happens; it must not have returned yet.
pub(super) async fn waiting_worker(
    jobs: Arc<dyn Jobs>,
) -> Pin<Box<dyn Future<Output = ()> + Send>> {
    let mut waiter: Pin<Box<dyn Future<Output = ()> + Send>> =
        Box::pin(async move { jobs.wait_for_work(Duration::from_secs(120)).await });
    assert!(
        poll_once(&mut waiter).await.is_pending(),
        "wait_for_work returned at once with no work at all"
    );
    waiter
}

async fn enqueue(p: &StorePorts, jobs: &[NewJob]) {
    commit(
        p.store.as_ref(),
        "enqueueing jobs",
        jobs.iter().cloned().map(Write::EnqueueJob).collect(),
    )
    .await;
}

async fn claim(p: &StorePorts, at: chrono::DateTime<chrono::Utc>, max: usize) -> Vec<ClaimedJob> {
    p.jobs.claim(at, LEASE, max).await.expect("claim failed")
}

async fn claim_one(p: &StorePorts, at: chrono::DateTime<chrono::Utc>) -> ClaimedJob {
    let mut claimed = claim(p, at, 1).await;
    assert_eq!(claimed.len(), 1, "expected one claimable job at {at}");
    claimed.remove(0)
}

/// A job enqueued by a commit is claimable once due, not before, with its payload and
/// zero attempts.
pub async fn job_claimable_when_due_not_before(p: &StorePorts) {
    let ws = workspace(p, "due").await;
    let now = now_ms();
    let later = job(&ws.id, secs(now, 60));
    enqueue(p, std::slice::from_ref(&later)).await;

    assert!(
        claim(p, now, 10).await.is_empty(),
        "a job was claimed before its run_at"
    );
    assert!(
        claim(p, secs(now, 59), 10).await.is_empty(),
        "a job was claimed early"
    );
    let claimed = claim(p, secs(now, 61), 10).await;
    assert_eq!(claimed.len(), 1, "the due job must be claimable");
    assert_eq!(claimed[0].id, later.id);
    assert_eq!(claimed[0].payload, later.payload);
    assert_eq!(claimed[0].attempts, 0);
    assert!(
        claim(p, secs(now, 62), 10).await.is_empty(),
        "a leased job must not be claimed twice"
    );
}

/// Claims hand out due jobs oldest `run_at` first and at most `max` at a time.
pub async fn jobs_claimed_oldest_first_up_to_max(p: &StorePorts) {
    let ws = workspace(p, "order").await;
    let now = now_ms();
    let jobs = vec![
        job(&ws.id, secs(now, -1)),
        job(&ws.id, secs(now, -3)),
        job(&ws.id, secs(now, -2)),
        job(&ws.id, secs(now, 100)),
    ];
    enqueue(p, &jobs).await;
    let first = claim(p, now, 2).await;
    let ids: Vec<&str> = first.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(
        ids,
        vec![jobs[1].id.as_str(), jobs[2].id.as_str()],
        "oldest run_at first, max 2"
    );
    let rest = claim(p, now, 10).await;
    let ids: Vec<&str> = rest.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(ids, vec![jobs[0].id.as_str()], "only due jobs");
    assert!(claim(p, now, 0).await.is_empty(), "max 0 claims nothing");
}

/// Six concurrent claimers of 60 due jobs, four at a time, never get the same job, and
/// together claim every one.
pub async fn job_claim_is_exclusive(p: &StorePorts) {
    const JOBS: usize = 60;
    let ws = workspace(p, "exclusive").await;
    let now = now_ms();
    let jobs: Vec<NewJob> = (0..JOBS).map(|_| job(&ws.id, secs(now, -1))).collect();
    enqueue(p, &jobs).await;

    let mut claimers = tokio::task::JoinSet::new();
    for _ in 0..6 {
        let queue = p.jobs.clone();
        claimers.spawn(async move {
            let mut mine = Vec::new();
            loop {
                let got = queue.claim(now, LEASE, 4).await.expect("claim failed");
                if got.is_empty() {
                    return mine;
                }
                mine.extend(got.into_iter().map(|j| j.id));
                tokio::task::yield_now().await;
            }
        });
    }
    let mut all = Vec::new();
    while let Some(done) = claimers.join_next().await {
        all.extend(done.expect("a claimer panicked"));
    }
    let distinct: HashSet<&JobId> = all.iter().collect();
    assert_eq!(
        distinct.len(),
        all.len(),
        "a job was handed to two claimers"
    );
    assert_eq!(all.len(), JOBS, "every job must be claimed exactly once");
    let stats = p.jobs.stats(now).await.expect("stats failed");
    assert_eq!(
        stats,
        JobStats {
            queued: 0,
            running: JOBS as u64,
            dead: 0
        }
    );
}

/// A lease holds until its last second and expires on the dot (`LEASE` after the claim):
/// then the job is queued in `stats` and claimable again with a new token and no counted
/// attempt; the old token is stale for `complete`, `retry` and `dead_letter`.
pub async fn job_lease_expiry_makes_claimable_and_old_token_stale(p: &StorePorts) {
    let ws = workspace(p, "lease").await;
    let now = now_ms();
    enqueue(p, &[job(&ws.id, now)]).await;
    let first = claim_one(p, now).await;

    assert!(
        claim(p, secs(now, 10), 10).await.is_empty(),
        "claimed while the lease holds"
    );
    assert!(
        claim(p, secs(now, 29), 10).await.is_empty(),
        "claimed in the lease's last second"
    );
    let stats = p.jobs.stats(secs(now, 29)).await.expect("stats failed");
    assert_eq!(
        stats,
        JobStats {
            queued: 0,
            running: 1,
            dead: 0
        },
        "stats while leased"
    );
    let stats = p.jobs.stats(secs(now, 30)).await.expect("stats failed");
    assert_eq!(
        stats,
        JobStats {
            queued: 1,
            running: 0,
            dead: 0
        },
        "stats when the lease expires"
    );

    let second = claim_one(p, secs(now, 30)).await;
    assert_eq!(second.id, first.id);
    assert_ne!(
        second.lease_token, first.lease_token,
        "a new claim needs a new token"
    );
    assert_eq!(
        second.attempts, 0,
        "an expired lease is not a counted failure"
    );

    assert_eq!(
        p.jobs.complete(&first).await,
        Ok(false),
        "complete with a stale token"
    );
    assert_eq!(
        p.jobs.retry(&first, now, true, "late").await,
        Ok(false),
        "retry with a stale token"
    );
    assert_eq!(
        p.jobs.dead_letter(&first, "late").await,
        Ok(false),
        "dead_letter with a stale token"
    );
    assert_eq!(
        p.jobs.complete(&second).await,
        Ok(true),
        "complete with the live token"
    );
    assert_eq!(p.jobs.stats(secs(now, 32)).await, Ok(JobStats::default()));
    assert_eq!(p.jobs.stats(now).await, Ok(JobStats::default()));
}

/// `retry` with `failed` counts an attempt and delays the job to `at`; without `failed` it
/// delays without counting.
pub async fn job_retry_counts_failed_attempts_and_delays(p: &StorePorts) {
    let ws = workspace(p, "retry").await;
    let now = now_ms();
    enqueue(p, &[job(&ws.id, now)]).await;

    let claimed = claim_one(p, now).await;
    let retried = p.jobs.retry(&claimed, secs(now, 120), true, "boom").await;
    assert_eq!(retried, Ok(true));
    let stats = p.jobs.stats(secs(now, 1)).await.expect("stats failed");
    assert_eq!(
        stats,
        JobStats {
            queued: 1,
            running: 0,
            dead: 0
        },
        "a retried job is queued"
    );
    assert!(
        claim(p, secs(now, 60), 10).await.is_empty(),
        "claimed before the retry time"
    );

    let again = claim_one(p, secs(now, 121)).await;
    assert_eq!(again.attempts, 1, "a failed retry counts an attempt");
    assert_eq!(
        p.jobs.retry(&claimed, now, true, "x").await,
        Ok(false),
        "stale token"
    );

    let retried = p
        .jobs
        .retry(&again, secs(now, 200), false, "throttled")
        .await;
    assert_eq!(retried, Ok(true));
    assert!(
        claim(p, secs(now, 199), 10).await.is_empty(),
        "claimed before the retry time"
    );
    let third = claim_one(p, secs(now, 201)).await;
    assert_eq!(
        third.attempts, 1,
        "a retry without failure must not count an attempt"
    );

    let retried = p.jobs.retry(&third, secs(now, 300), true, "boom").await;
    assert_eq!(retried, Ok(true));
    assert_eq!(claim_one(p, secs(now, 301)).await.attempts, 2);
}

/// A dead-lettered job is never claimed again and shows as dead in `stats`.
pub async fn job_dead_letter_shows_in_stats(p: &StorePorts) {
    let ws = workspace(p, "dead").await;
    let now = now_ms();
    enqueue(p, &[job(&ws.id, now), job(&ws.id, secs(now, 3600))]).await;
    let claimed = claim_one(p, now).await;
    assert_eq!(p.jobs.dead_letter(&claimed, "hopeless").await, Ok(true));
    let stats = p.jobs.stats(now).await.expect("stats failed");
    assert_eq!(
        stats,
        JobStats {
            queued: 1,
            running: 0,
            dead: 1
        }
    );
    assert_eq!(
        p.jobs.dead_letter(&claimed, "again").await,
        Ok(false),
        "no longer leased"
    );
    assert_eq!(
        p.jobs.complete(&claimed).await,
        Ok(false),
        "a dead job cannot complete"
    );
    let later = claim(p, secs(now, 7200), 10).await;
    assert_eq!(later.len(), 1, "only the other job is claimable");
    assert_ne!(later[0].id, claimed.id, "a dead job was claimed");
}

/// `dead` lists dead-lettered jobs (with payload, attempts and error) and no job in another
/// state; `revive` queues one again at `at` (not claimable before) with no attempts, after
/// which it is no longer listed; reviving an unknown or non-dead id is `false` and changes
/// nothing.
pub async fn job_dead_listed_and_revived(p: &StorePorts) {
    let ws = workspace(p, "revive").await;
    let now = now_ms();
    let doomed = job(&ws.id, now);
    let running = job(&ws.id, now);
    let queued = job(&ws.id, secs(now, 3600));
    enqueue(p, &[doomed.clone(), running.clone(), queued.clone()]).await;
    // One failed attempt, then parked.
    let first = claim(p, now, 10).await;
    assert_eq!(first.len(), 2, "both due jobs are claimable");
    let (mut doomed_claim, mut running_claim) = (None, None);
    for claimed in first {
        if claimed.id == doomed.id {
            doomed_claim = Some(claimed);
        } else {
            running_claim = Some(claimed);
        }
    }
    let doomed_claim = doomed_claim.expect("the doomed job was claimed");
    let running_claim = running_claim.expect("the other due job was claimed");
    assert_eq!(
        p.jobs
            .retry(&doomed_claim, secs(now, 10), true, "first")
            .await,
        Ok(true)
    );
    let again = claim_one(p, secs(now, 10)).await;
    assert_eq!(again.id, doomed.id);
    assert_eq!(p.jobs.dead_letter(&again, "hopeless").await, Ok(true));

    let listed = p.jobs.dead(10).await.expect("dead failed");
    assert_eq!(
        listed,
        vec![DeadJob {
            id: doomed.id.clone(),
            payload: doomed.payload.clone(),
            attempts: 1,
            last_error: Some("hopeless".into()),
        }],
        "only the dead job is listed (not the running or the queued one)"
    );
    assert_eq!(
        p.jobs.dead(0).await,
        Ok(Vec::new()),
        "limit 0 lists nothing"
    );
    assert_eq!(
        p.jobs.dead_job(&doomed.id).await.expect("dead_job failed"),
        listed.first().cloned(),
        "looked up by id as listed"
    );
    for other in [&running.id, &queued.id] {
        assert_eq!(p.jobs.dead_job(other).await, Ok(None), "not dead: {other}");
    }

    // Unknown and non-dead ids: false, nothing changes.
    let unknown = crate::fixtures::fresh_id();
    assert_eq!(p.jobs.revive(&unknown, now).await, Ok(false));
    assert_eq!(p.jobs.revive(&running.id, now).await, Ok(false), "running");
    assert_eq!(p.jobs.revive(&queued.id, now).await, Ok(false), "queued");
    let stats = p.jobs.stats(secs(now, 10)).await.expect("stats failed");
    assert_eq!(
        stats,
        JobStats {
            queued: 1,
            running: 1,
            dead: 1
        },
        "reviving a job that is not dead changed state"
    );
    assert!(
        claim(p, secs(now, 20), 10).await.is_empty(),
        "reviving a queued job made it due early"
    );
    assert_eq!(p.jobs.complete(&running_claim).await, Ok(true));

    // Revived: queued at `at`, not before, with no attempts; no longer listed.
    let at = secs(now, 120);
    assert_eq!(p.jobs.revive(&doomed.id, at).await, Ok(true));
    assert_eq!(
        p.jobs.dead(10).await,
        Ok(Vec::new()),
        "a revived job is listed"
    );
    assert_eq!(
        p.jobs.dead_job(&doomed.id).await,
        Ok(None),
        "a revived job is found dead"
    );
    assert_eq!(
        p.jobs.revive(&doomed.id, at).await,
        Ok(false),
        "reviving twice"
    );
    let stats = p.jobs.stats(secs(now, 20)).await.expect("stats failed");
    assert_eq!(
        stats,
        JobStats {
            queued: 2,
            running: 0,
            dead: 0
        }
    );
    assert!(
        claim(p, secs(now, 119), 10).await.is_empty(),
        "a revived job was claimed before its time"
    );
    let revived = claim_one(p, at).await;
    assert_eq!(revived.id, doomed.id);
    assert_eq!(revived.payload, doomed.payload);
    assert_eq!(revived.attempts, 0, "revive resets attempts");
    assert_eq!(revived.claims, 1, "revive resets claims");
    assert_eq!(p.jobs.complete(&revived).await, Ok(true));
}

/// Dead jobs are listed oldest first by id, at most `limit`.
pub async fn job_dead_listed_by_id_up_to_limit(p: &StorePorts) {
    let ws = workspace(p, "dead-order").await;
    let now = now_ms();
    let jobs: Vec<NewJob> = (0..3).map(|_| job(&ws.id, now)).collect();
    enqueue(p, &jobs).await;
    for claimed in claim(p, now, 10).await {
        assert_eq!(p.jobs.dead_letter(&claimed, "x").await, Ok(true));
    }
    let mut ids: Vec<JobId> = jobs.iter().map(|j| j.id.clone()).collect();
    ids.sort();
    let listed: Vec<JobId> = p
        .jobs
        .dead(2)
        .await
        .expect("dead failed")
        .into_iter()
        .map(|d| d.id)
        .collect();
    assert_eq!(listed, ids[..2].to_vec());
}

/// `complete` removes the job for good.
pub async fn job_complete_removes(p: &StorePorts) {
    let ws = workspace(p, "complete").await;
    let now = now_ms();
    enqueue(p, &[job(&ws.id, now)]).await;
    let claimed = claim_one(p, now).await;
    assert_eq!(p.jobs.complete(&claimed).await, Ok(true));
    assert_eq!(
        p.jobs.complete(&claimed).await,
        Ok(false),
        "completing twice"
    );
    assert_eq!(p.jobs.stats(now).await, Ok(JobStats::default()));
    assert!(
        claim(p, secs(now, 86_400), 10).await.is_empty(),
        "a completed job came back"
    );
}

/// `n` jobs of a new workspace `name`, claimed at `now`, numbered, every third with a lease
/// token that is not (or no longer) its worker's own: `(i, job, stale)`.
async fn leased_some_stale(
    p: &StorePorts,
    name: &str,
    now: chrono::DateTime<chrono::Utc>,
    n: usize,
) -> impl Iterator<Item = (usize, ClaimedJob, bool)> {
    let ws = workspace(p, name).await;
    let jobs: Vec<NewJob> = (0..n).map(|_| job(&ws.id, now)).collect();
    enqueue(p, &jobs).await;
    let claimed = claim(p, now, n).await;
    assert_eq!(claimed.len(), n);
    claimed.into_iter().enumerate().map(|(i, mut claimed)| {
        let stale = i % 3 == 0;
        if stale {
            claimed.lease_token = format!("stale-{i}");
        }
        (i, claimed, stale)
    })
}

/// Concurrent completions (workers finishing at once) each delete their own job and say
/// so; a completion with a stale lease token deletes nothing and says so. (Stores may make
/// the completions that arrive together in one transaction; each still gets its own
/// answer.)
pub async fn job_concurrent_completions_honour_their_leases(p: &StorePorts) {
    let now = now_ms();
    let n = 300;
    let tasks: Vec<_> = leased_some_stale(p, "completions", now, n)
        .await
        .map(|(i, claimed, stale)| {
            let jobs = Arc::clone(&p.jobs);
            tokio::spawn(async move {
                let done = jobs.complete(&claimed).await;
                assert_eq!(done, Ok(!stale), "job {i}");
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a completing worker panicked");
    }
    let stats = p.jobs.stats(now).await.expect("stats");
    assert_eq!((stats.queued, stats.running), (0, n as u64 / 3));
}

/// A worker whose lease ran out and the worker that claimed the job after it complete it at
/// the same moment: only the current lease settles it, and only its holder is told so,
/// also when a store settles both in one statement.
pub async fn job_stale_and_current_leases_settle_apart(p: &StorePorts) {
    let now = now_ms();
    let n = 100;
    let ws = workspace(p, "stale-and-current").await;
    let jobs: Vec<NewJob> = (0..n).map(|_| job(&ws.id, now)).collect();
    enqueue(p, &jobs).await;
    let claimed = claim(p, now, n).await;
    assert_eq!(claimed.len(), n);
    let mut tasks = Vec::new();
    for (i, current) in claimed.into_iter().enumerate() {
        let mut stale = current.clone();
        stale.lease_token = format!("expired-{i}");
        for (claim, holds) in [(stale, false), (current, true)] {
            let jobs = Arc::clone(&p.jobs);
            tasks.push(tokio::spawn(async move {
                assert_eq!(jobs.complete(&claim).await, Ok(holds), "job {i}");
            }));
        }
    }
    for task in tasks {
        task.await.expect("a completing worker panicked");
    }
    let stats = p.jobs.stats(now).await.expect("stats");
    assert_eq!((stats.queued, stats.running), (0, 0));
}

/// Workers putting their jobs back at once (throttled, or after a failure), as a burst of
/// deliveries over the sending rate does: each retry honours its own lease (a stale one
/// changes nothing), keeps its own time and counts only its own failed attempt.
pub async fn job_concurrent_retries_honour_their_leases_and_times(p: &StorePorts) {
    let now = now_ms();
    let n = 120;
    let mut failed_ids = HashSet::new();
    let tasks: Vec<_> = leased_some_stale(p, "retries", now, n)
        .await
        .map(|(i, claimed, stale)| {
            let jobs = Arc::clone(&p.jobs);
            // Half failed and come back in 10 s; the others were throttled, back in 20 s.
            let failed = i % 2 == 0;
            if failed && !stale {
                failed_ids.insert(claimed.id.clone());
            }
            let at = secs(now, if failed { 10 } else { 20 });
            tokio::spawn(async move {
                let done = jobs.retry(&claimed, at, failed, "busy").await;
                assert_eq!(done, Ok(!stale), "job {i}");
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a retrying worker panicked");
    }
    assert!(claim(p, secs(now, 9), n).await.is_empty(), "back too early");
    let failed = claim(p, secs(now, 10), n).await;
    assert_eq!(
        failed.iter().map(|j| j.id.clone()).collect::<HashSet<_>>(),
        failed_ids
    );
    assert!(
        failed.iter().all(|j| j.attempts == 1),
        "a failed attempt each"
    );
    let throttled = claim(p, secs(now, 20), n).await;
    assert_eq!(throttled.len(), 40);
    assert!(
        throttled.iter().all(|j| j.attempts == 0),
        "no attempt counted"
    );
    // Every job is leased now: the stale workers' 40 still to whoever holds them, and the
    // 80 claimed again.
    let stats = p.jobs.stats(secs(now, 20)).await.expect("stats");
    assert_eq!(stats.running, 40 + 40 + 40);
}

/// Every claim counts in `claims` until the job is settled: a lease that runs out makes the
/// next claim count one more, and `retry` starts the count again.
pub async fn job_claims_count_unsettled_leases_and_retry_resets(p: &StorePorts) {
    let ws = workspace(p, "claims").await;
    let now = now_ms();
    enqueue(p, &[job(&ws.id, now)]).await;
    let first = claim_one(p, now).await;
    assert_eq!(first.claims, 1, "a first claim counts 1");
    // The worker dies twice: each expired lease makes the next claim count one more.
    let second = claim_one(p, secs(now, 31)).await;
    assert_eq!(second.claims, 2, "claimed again after an expired lease");
    let third = claim_one(p, secs(now, 62)).await;
    assert_eq!(third.claims, 3, "claimed a third time");
    assert_eq!(
        p.jobs
            .retry(&third, secs(now, 63), false, "throttled")
            .await,
        Ok(true)
    );
    let after_retry = claim_one(p, secs(now, 64)).await;
    assert_eq!(after_retry.claims, 1, "retry starts the count again");
    assert_eq!(
        after_retry.attempts, 0,
        "a retry without failure is no attempt"
    );
    assert_eq!(p.jobs.complete(&after_retry).await, Ok(true));
}

/// Operations with a token that never was a lease (or a job that does not exist) return
/// `false` and change nothing.
pub async fn job_stale_token_changes_nothing(p: &StorePorts) {
    let ws = workspace(p, "forged").await;
    let now = now_ms();
    enqueue(p, &[job(&ws.id, now)]).await;
    let claimed = claim_one(p, now).await;
    let forged = ClaimedJob {
        lease_token: uuid::Uuid::new_v4().to_string(),
        ..claimed.clone()
    };
    assert_eq!(p.jobs.complete(&forged).await, Ok(false));
    assert_eq!(p.jobs.retry(&forged, now, true, "x").await, Ok(false));
    assert_eq!(p.jobs.dead_letter(&forged, "x").await, Ok(false));
    let unknown = ClaimedJob {
        id: crate::fixtures::fresh_id(),
        ..claimed.clone()
    };
    assert_eq!(p.jobs.complete(&unknown).await, Ok(false));
    let stats = p.jobs.stats(now).await.expect("stats failed");
    assert_eq!(
        stats,
        JobStats {
            queued: 0,
            running: 1,
            dead: 0
        },
        "a forged token changed state"
    );
    assert_eq!(p.jobs.complete(&claimed).await, Ok(true));
}

/// `wait_for_work` waits while nothing happens and returns early when a commit enqueues a
/// job.
pub async fn job_wait_for_work_wakes_on_commit(p: &StorePorts) {
    let ws = workspace(p, "wake").await;

    let started = Instant::now();
    p.jobs.wait_for_work(Duration::from_millis(300)).await;
    assert!(
        started.elapsed() >= Duration::from_millis(200),
        "wait_for_work returned after {:?} with no work at all",
        started.elapsed()
    );

    let mut waiter = waiting_worker(p.jobs.clone()).await;
    // An adapter may take a moment before it hears commits (a listener still connecting),
    // so commit until the waiter wakes, within a bounded deadline; no blind sleep.
    let started = Instant::now();
    let mut commits = 0;
    loop {
        enqueue(p, &[job(&ws.id, now_ms())]).await;
        commits += 1;
        if tokio::time::timeout(Duration::from_millis(100), waiter.as_mut())
            .await
            .is_ok()
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "wait_for_work was not woken by {commits} commits that enqueued jobs in {:?}",
            started.elapsed()
        );
    }
}
