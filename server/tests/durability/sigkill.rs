//! A process killed with SIGKILL mid-delivery loses nothing it accepted, and delivers twice
//! only what its workers held (the documented at-least-once window). One scenario, run on
//! every durable store (`crate::sqlite::sigkill` runs it on SQLite).

use std::collections::HashSet;
use std::time::Duration;

use hyper::Method;

use crate::support::posthorn::{note, Posthorn, TestDb};
use crate::support::sink::Sink;
use crate::support::{
    burst, duplicates, missing, mixed_calls, sample, unconfirmed, wait_for_idle_queue, wait_until,
    BURST_EVENT, WORKER_CONCURRENCY,
};

const SENDS: usize = 300;
const TRACKS: usize = 300;
/// Mail at the sink that triggers the kill.
const KILL_AFTER: usize = 90;

/// A durable store the scenario runs on.
pub trait DurableStore {
    /// `POSTHORN_STORE` for the processes.
    fn url(&self) -> String;
    /// The jobs a killed process left leased: (job id, email id of a delivery job).
    async fn leased_jobs(&self) -> Vec<(String, Option<String>)>;
}

impl DurableStore for TestDb {
    fn url(&self) -> String {
        self.url.clone()
    }

    async fn leased_jobs(&self) -> Vec<(String, Option<String>)> {
        // Once PostgreSQL finished the dead process's last statements.
        self.wait_until_quiet().await;
        self.running_jobs().await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_delivery_loses_nothing() {
    let Some(db) = TestDb::create("sigkill_mid_delivery_loses_nothing").await else {
        return;
    };
    sigkill_scenario("sigkill", &db).await;
    db.drop().await;
}

/// Kills a process mid-delivery, restarts one on the same store, and checks that every
/// accepted email is delivered and every accepted event stored, with duplicates only among
/// the jobs the dead process held.
pub async fn sigkill_scenario(label: &str, store: &impl DurableStore) {
    let url = store.url();
    let sink = Sink::start(1, Duration::from_millis(5), Duration::from_millis(20)).await;
    let mut first = Posthorn::start("posthorn #1", &url, sink.port(0)).await;
    let ws = first.create_workspace("durability").await;

    let intake = tokio::spawn(burst(
        vec![first.api.clone()],
        ws.secret_key.clone(),
        mixed_calls(SENDS, TRACKS),
    ));
    // Kill as soon as some mail reached the sink (or anything, once the burst is over).
    let reached = wait_until(Duration::from_secs(30), || {
        sink.count() >= KILL_AFTER || (intake.is_finished() && sink.count() > 0)
    })
    .await;
    assert!(
        reached,
        "only {} messages reached the sink within 30 s\n{}",
        sink.count(),
        first.logs()
    );
    first.sigkill().await;
    let delivered_at_kill = sink.count();
    let accepted = tokio::time::timeout(Duration::from_secs(30), intake)
        .await
        .expect("the burst did not end within 30 s of the kill")
        .expect("the burst task panicked");
    assert!(
        !accepted.emails.is_empty() && !accepted.events.is_empty(),
        "the API accepted nothing before the kill: {accepted:?}"
    );
    let undelivered_at_kill = missing(&sink, &accepted.emails).len();

    // The leases the dead process left behind.
    let leased = store.leased_jobs().await;
    let leased_ids: Vec<String> = leased.iter().map(|(id, _)| id.clone()).collect();
    let leased_emails: HashSet<String> = leased.iter().filter_map(|(_, e)| e.clone()).collect();
    assert!(
        leased.len() <= WORKER_CONCURRENCY,
        "the killed process held {} leases, more than its worker concurrency {WORKER_CONCURRENCY}",
        leased.len()
    );

    assert!(
        undelivered_at_kill > 0 || !leased.is_empty(),
        "the kill did not land mid-delivery: all {} accepted emails were delivered and no job \
         was leased",
        accepted.emails.len()
    );

    let second = Posthorn::start("posthorn #2", &url, sink.port(0)).await;
    // Everything not leased by the dead process goes out without waiting for any lease.
    let recovered = wait_until(Duration::from_secs(30), || {
        missing(&sink, &accepted.emails)
            .iter()
            .all(|id| leased_emails.contains(id))
    })
    .await;
    if !recovered {
        let lost: Vec<String> = missing(&sink, &accepted.emails)
            .into_iter()
            .filter(|id| !leased_emails.contains(id))
            .collect();
        panic!(
            "30 s after the restart, {} accepted emails (not leased by the killed process) \
             had not reached the sink: {}\n{}",
            lost.len(),
            sample(&lost),
            second.logs()
        );
    }
    // The jobs leased by the dead process run again once their lease ends
    // (POSTHORN_JOB_LEASE_SECS=5 here).
    if !leased_ids.is_empty() {
        note(&format!(
            "{label}: {} jobs were leased by the killed process; waiting for their 5 s leases",
            leased_ids.len()
        ));
    }
    let complete = wait_until(Duration::from_secs(20), || {
        missing(&sink, &accepted.emails).is_empty()
    })
    .await;
    if !complete {
        let lost = missing(&sink, &accepted.emails);
        panic!(
            "{} accepted emails never reached the sink (even after their leases ended): {}\n{}",
            lost.len(),
            sample(&lost),
            second.logs()
        );
    }
    let (_, _, dead) = wait_for_idle_queue(&second, Duration::from_secs(20))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", second.logs()));
    assert_eq!(dead, 0, "jobs were dead-lettered\n{}", second.logs());

    let counts = sink.counts();
    let dups = duplicates(&counts);
    let extra: usize = dups.values().map(|n| n - 1).sum();
    note(&format!(
        "{label}: accepted {} emails and {} events ({} requests refused, {} failed by the kill); \
         {delivered_at_kill} messages at the sink at the kill, {undelivered_at_kill} accepted \
         emails not yet delivered, {} jobs leased; after the restart {} messages, {} duplicated \
         ({extra} extra deliveries), {} delivered without a confirmed answer",
        accepted.emails.len(),
        accepted.events.len(),
        accepted.refused.values().sum::<usize>(),
        accepted.failed,
        leased.len(),
        sink.count(),
        dups.len(),
        unconfirmed(&counts, &accepted.emails),
    ));
    assert!(
        extra <= leased.len() && extra <= WORKER_CONCURRENCY,
        "{extra} duplicate deliveries, more than the {} deliveries in flight at the kill: {dups:?}",
        leased.len()
    );
    let unexpected: Vec<String> = dups
        .keys()
        .filter(|id| !leased_emails.contains(*id))
        .cloned()
        .collect();
    assert!(
        unexpected.is_empty(),
        "emails delivered twice although the killed process did not hold their job: {}",
        sample(&unexpected)
    );
    assert!(
        dups.values().all(|n| *n == 2),
        "an email was delivered more than twice: {dups:?}"
    );

    // Every accepted event is stored.
    let events = second
        .api
        .expect(
            200,
            Method::GET,
            &format!("/events?eventName={BURST_EVENT}&limit=1000"),
            Some(&ws.secret_key),
            None,
        )
        .await;
    let stored: HashSet<&str> = events["events"]
        .as_array()
        .unwrap_or_else(|| panic!("GET /events: no `events` array in {events}"))
        .iter()
        .filter_map(|e| e["id"].as_str())
        .collect();
    let lost: Vec<String> = accepted
        .events
        .iter()
        .filter(|id| !stored.contains(id.as_str()))
        .cloned()
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {} accepted events are not stored: {}",
        lost.len(),
        accepted.events.len(),
        sample(&lost)
    );

    drop(second);
}
