//! The lease heartbeat of `Engine::run_job`: a delivery held by a slow transport for many
//! leases is not claimed again by another worker while it runs, and is sent once.
//!
//! Time is tokio's paused clock (it jumps ahead whenever every task waits), and the engine's
//! clock reads that same time, so leases, heartbeats and the slow send take no real time.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use posthorn_core::jobs::JobOutcome;
use posthorn_core::model::JobId;
use posthorn_core::ports::{ClaimedJob, Clock, DeadJob, JobStats, Jobs, PortError};
use posthorn_memory::MemoryStore;
use posthorn_runtime::prelude::*;
use tokio::time::Instant;

const LEASE: Duration = Duration::from_secs(2);
/// How long the transport holds each message: five leases.
const HOLD: Duration = Duration::from_secs(10);
/// How often the second worker looks for claimable jobs.
const POLL: Duration = Duration::from_millis(100);

/// The engine's clock on tokio's time, so a paused runtime moves both together.
struct TokioClock {
    start: DateTime<Utc>,
    origin: Instant,
}

impl Clock for TokioClock {
    fn now(&self) -> DateTime<Utc> {
        let elapsed = TimeDelta::from_std(self.origin.elapsed()).expect("elapsed fits");
        let now = self.start + elapsed;
        DateTime::from_timestamp_millis(now.timestamp_millis()).expect("in range")
    }

    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// A transport that takes `hold` to answer each message (a slow SMTP server), counting the
/// messages it accepted.
struct SlowTransport {
    hold: Duration,
    sent: AtomicUsize,
}

#[async_trait]
impl MailTransport for SlowTransport {
    async fn send(&self, message: &OutgoingMessage) -> Result<String, TransportError> {
        tokio::time::sleep(self.hold).await;
        self.sent.fetch_add(1, Ordering::SeqCst);
        Ok(message.message_id.clone())
    }
}

/// The memory store's job queue, counting renewals; with `refuse`, every renewal answers
/// that the lease was lost (and renews nothing).
pub(super) struct CountingJobs {
    inner: Arc<MemoryStore>,
    refuse: bool,
    extends: AtomicUsize,
    pub(super) claims: AtomicUsize,
}

#[async_trait]
impl Jobs for CountingJobs {
    async fn claim(
        &self,
        now: DateTime<Utc>,
        lease: Duration,
        max: usize,
    ) -> Result<Vec<ClaimedJob>, PortError> {
        self.claims.fetch_add(1, Ordering::SeqCst);
        self.inner.claim(now, lease, max).await
    }
    async fn extend(
        &self,
        job: &ClaimedJob,
        now: DateTime<Utc>,
        lease: Duration,
    ) -> Result<bool, PortError> {
        self.extends.fetch_add(1, Ordering::SeqCst);
        if self.refuse {
            return Ok(false);
        }
        self.inner.extend(job, now, lease).await
    }
    async fn complete(&self, job: &ClaimedJob) -> Result<bool, PortError> {
        self.inner.complete(job).await
    }
    async fn retry(
        &self,
        job: &ClaimedJob,
        at: DateTime<Utc>,
        failed: bool,
        error: &str,
    ) -> Result<bool, PortError> {
        self.inner.retry(job, at, failed, error).await
    }
    async fn dead_letter(&self, job: &ClaimedJob, error: &str) -> Result<bool, PortError> {
        self.inner.dead_letter(job, error).await
    }
    async fn wait_for_work(&self, timeout: Duration) {
        self.inner.wait_for_work(timeout).await
    }
    async fn stats(&self, now: DateTime<Utc>) -> Result<JobStats, PortError> {
        self.inner.stats(now).await
    }
    async fn dead(&self, limit: usize) -> Result<Vec<DeadJob>, PortError> {
        self.inner.dead(limit).await
    }
    async fn dead_job(&self, id: &JobId) -> Result<Option<DeadJob>, PortError> {
        self.inner.dead_job(id).await
    }
    async fn revive(&self, id: &JobId, at: DateTime<Utc>) -> Result<bool, PortError> {
        self.inner.revive(id, at).await
    }
}

/// The engine's clock on tokio's paused time, from a fixed date.
fn tokio_clock() -> Arc<TokioClock> {
    Arc::new(TokioClock {
        start: Utc
            .with_ymd_and_hms(2026, 3, 2, 10, 0, 0)
            .single()
            .expect("date"),
        origin: Instant::now(),
    })
}

/// `store`'s job queue, counting claims and renewals.
fn counting_jobs(store: &Arc<MemoryStore>, refuse: bool) -> Arc<CountingJobs> {
    Arc::new(CountingJobs {
        inner: store.clone(),
        refuse,
        extends: AtomicUsize::new(0),
        claims: AtomicUsize::new(0),
    })
}

/// A workspace made by `create` with example.com verified, and its secret-key caller.
async fn sender(engine: &Engine, create: CreateWorkspace) -> Caller {
    let (ws, keys) = engine.create_workspace(create).await.expect("workspace");
    engine
        .admin_add_domain(&ws.id, AddDomain::verified("example.com"))
        .await
        .expect("domain");
    Caller::with_secret_key(ws, keys.record)
}

/// An engine on tokio's paused time delivering through `transport`, with `emails` emails
/// queued and all due at once (no send throttle), and its job queue counting claims.
pub(super) async fn burst(
    transport: Arc<dyn MailTransport>,
    emails: usize,
) -> (Engine, Arc<CountingJobs>) {
    let store = Arc::new(MemoryStore::new());
    let jobs = counting_jobs(&store, false);
    let engine = Engine::builder()
        .store(store)
        .jobs(jobs.clone())
        .transport(transport)
        .clock(tokio_clock())
        .build()
        .expect("engine");
    let mut create = CreateWorkspace::named("burst");
    create.send_rate_per_second = Some(100_000.0);
    let caller = sender(&engine, create).await;
    for i in 0..emails {
        let send = email(&format!("reader{i}@example.org"), "Burst");
        engine.send(&caller, send).await.expect("send");
    }
    (engine, jobs)
}

/// An email from team@example.com to `to`.
fn email(to: &str, subject: &str) -> SendEmail {
    let mut send = SendEmail::to(EmailAddress::parse(to).expect("to"));
    send.from = Some((EmailAddress::parse("team@example.com").expect("from"), None));
    send.subject = Some(subject.into());
    send.body = Some(format!("<p>{}</p>", subject.to_lowercase()));
    send
}

struct Slow {
    engine: Engine,
    clock: Arc<TokioClock>,
    transport: Arc<SlowTransport>,
    jobs: Arc<CountingJobs>,
}

/// An engine leasing jobs for `LEASE`, with one delivery job claimed.
async fn one_claimed_delivery() -> (Slow, ClaimedJob) {
    claimed_delivery(HOLD, false).await
}

/// An engine leasing jobs for `LEASE` whose transport holds each message for `hold`, with
/// one delivery job claimed; with `refuse`, lease renewals answer that the lease was lost.
async fn claimed_delivery(hold: Duration, refuse: bool) -> (Slow, ClaimedJob) {
    let store = Arc::new(MemoryStore::new());
    let clock = tokio_clock();
    let transport = Arc::new(SlowTransport {
        hold,
        sent: AtomicUsize::new(0),
    });
    let jobs = counting_jobs(&store, refuse);
    let engine = Engine::builder()
        .store(store)
        .jobs(jobs.clone())
        .transport(transport.clone())
        .clock(clock.clone())
        .settings(Settings {
            job_lease: LEASE,
            ..Settings::default()
        })
        .build()
        .expect("engine");
    let caller = sender(&engine, CreateWorkspace::named("lease")).await;
    engine
        .send(&caller, email("ada@example.org", "Slow"))
        .await
        .expect("send");

    let mut claimed = engine
        .jobs
        .claim(clock.now(), LEASE, 10)
        .await
        .expect("claim");
    assert_eq!(claimed.len(), 1, "one delivery job");
    let slow = Slow {
        engine,
        clock,
        transport,
        jobs,
    };
    (slow, claimed.remove(0))
}

/// A second worker: what it could claim now.
async fn second_worker_claims(slow: &Slow) -> Vec<ClaimedJob> {
    slow.engine
        .jobs
        .claim(slow.clock.now(), LEASE, 10)
        .await
        .expect("second claim")
}

#[tokio::test(start_paused = true)]
async fn a_job_running_past_its_lease_keeps_it_and_is_delivered_once() {
    let (slow, job) = one_claimed_delivery().await;
    let started = Instant::now();
    let engine = slow.engine.clone();
    let mut running = tokio::spawn(async move { engine.run_job(&job).await });

    let outcome = loop {
        tokio::select! {
            outcome = &mut running => break outcome.expect("job task").expect("job ran"),
            () = tokio::time::sleep(POLL) => {
                let stolen = second_worker_claims(&slow).await;
                assert!(
                    stolen.is_empty(),
                    "claimed again {:?} into the run although its worker was alive",
                    started.elapsed()
                );
            }
        }
    };
    assert!(
        started.elapsed() >= HOLD,
        "the send was held for {:?}",
        started.elapsed()
    );
    assert_eq!(outcome, JobOutcome::Done);
    assert_eq!(slow.transport.sent.load(Ordering::SeqCst), 1, "sent once");
    assert_eq!(
        slow.engine.jobs.stats(slow.clock.now()).await,
        Ok(JobStats::default()),
        "the job was completed with its renewed lease"
    );
    assert!(second_worker_claims(&slow).await.is_empty());
}

/// The control: the same claim, held as long but with no heartbeat (its worker stalled),
/// is claimed by the second worker once its lease ends, so the check above can fail.
#[tokio::test(start_paused = true)]
async fn a_claim_without_heartbeat_is_taken_over_after_its_lease() {
    let (slow, job) = one_claimed_delivery().await;
    let started = Instant::now();
    let stolen = loop {
        tokio::time::sleep(POLL).await;
        let stolen = second_worker_claims(&slow).await;
        if !stolen.is_empty() || started.elapsed() > HOLD {
            break stolen;
        }
    };
    assert_eq!(stolen.len(), 1, "taken over within the hold");
    assert_eq!(stolen[0].id, job.id);
    assert!(
        started.elapsed() >= LEASE,
        "taken over before the lease ended"
    );
}

/// A job done within a third of its lease costs no renewal at all.
#[tokio::test(start_paused = true)]
async fn a_quick_job_renews_nothing() {
    let (slow, job) = claimed_delivery(LEASE / 4, false).await;
    assert_eq!(slow.engine.run_job(&job).await, Ok(JobOutcome::Done));
    assert_eq!(slow.transport.sent.load(Ordering::SeqCst), 1);
    assert_eq!(slow.jobs.extends.load(Ordering::SeqCst), 0, "renewals");
}

/// A slow job renews about every third of its lease (here 10 s at 2 s leases: beats at
/// 0.66 s intervals, so 15).
#[tokio::test(start_paused = true)]
async fn a_slow_job_renews_every_third_of_its_lease() {
    let (slow, job) = claimed_delivery(HOLD, false).await;
    assert_eq!(slow.engine.run_job(&job).await, Ok(JobOutcome::Done));
    let beats = slow.jobs.extends.load(Ordering::SeqCst);
    assert!((14..=15).contains(&beats), "{beats} renewals in 10 s");
}

/// A renewal refused (the lease was lost) stops the beats; the handler goes on and
/// finishes (handlers are idempotent), so the message is still sent once by this run.
#[tokio::test(start_paused = true)]
async fn a_lost_lease_stops_the_beats_and_the_handler_finishes() {
    let (slow, job) = claimed_delivery(HOLD, true).await;
    let outcome = slow.engine.run_job(&job).await;
    assert!(outcome.is_ok(), "{outcome:?}");
    assert_eq!(slow.transport.sent.load(Ordering::SeqCst), 1, "sent");
    assert_eq!(
        slow.jobs.extends.load(Ordering::SeqCst),
        1,
        "no renewal after the first refused one"
    );
}

/// A transport whose n-th message takes `(n % 16 + 1) × 3 ms`: sixteen jobs in flight end
/// at sixteen different instants, as real deliveries do.
struct StaggeredTransport {
    sent: AtomicUsize,
}

#[async_trait]
impl MailTransport for StaggeredTransport {
    async fn send(&self, message: &OutgoingMessage) -> Result<String, TransportError> {
        let n = self.sent.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(3 * (n as u64 % 16 + 1))).await;
        Ok(message.message_id.clone())
    }
}

#[tokio::test(start_paused = true)]
async fn a_busy_queue_is_claimed_in_batches_not_one_claim_per_finished_job() {
    const EMAILS: usize = 160;
    let transport = Arc::new(StaggeredTransport {
        sent: AtomicUsize::new(0),
    });
    let (engine, jobs) = burst(transport.clone(), EMAILS).await;

    let (stop, stopped) = tokio::sync::watch::channel(false);
    let workers = tokio::spawn(run_workers(
        engine.clone(),
        WorkerOptions {
            concurrency: 16,
            ..Default::default()
        },
        stopped,
    ));
    while transport.sent.load(Ordering::SeqCst) < EMAILS {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    stop.send(true).expect("workers listen");
    workers.await.expect("workers stop");

    assert_eq!(
        transport.sent.load(Ordering::SeqCst),
        EMAILS,
        "each email sent once"
    );
    let claims = jobs.claims.load(Ordering::SeqCst);
    // One claim per finished job would be about 150; gathering half the slots (8) per
    // claim while the queue is busy makes it about EMAILS / 8, plus the idle claims at the end.
    assert!(
        claims <= EMAILS / 4,
        "{claims} claims for {EMAILS} jobs: the busy queue was claimed one job at a time"
    );
}
