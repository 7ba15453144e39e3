//! A process on SQLite killed with SIGKILL mid-delivery, restarted on the same file, loses
//! nothing it accepted, and delivers twice only what its workers held (the documented
//! at-least-once window). The same counts as `crate::sigkill` on PostgreSQL.

use std::collections::HashSet;
use std::time::Duration;

use hyper::Method;

use super::{sqlite_rows, DataDir};
use crate::support::posthorn::{note, Posthorn};
use crate::support::sink::Sink;
use crate::support::{
    burst, duplicates, missing, mixed_calls, sample, unconfirmed, wait_for_idle_queue, wait_until,
    BURST_EVENT, WORKER_CONCURRENCY,
};

const SENDS: usize = 300;
const TRACKS: usize = 300;
/// Mail at the sink that triggers the kill.
const KILL_AFTER: usize = 90;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_sigkill_mid_delivery_loses_nothing() {
    let data = DataDir::new();
    let store = data.store();
    let sink = Sink::start(1, Duration::from_millis(5), Duration::from_millis(20)).await;
    let mut first = Posthorn::start("posthorn #1", &store, sink.port(0)).await;
    let ws = first.create_workspace("durability").await;

    let intake = tokio::spawn(burst(
        vec![first.api.clone()],
        ws.secret_key.clone(),
        mixed_calls(SENDS, TRACKS),
    ));
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

    // The leases the dead process left in the file (no server holds it now).
    let leased = sqlite_rows(
        &data.db(),
        "SELECT id, json_extract(payload, '$.email_id') FROM jobs \
         WHERE state = 'running' ORDER BY id",
    )
    .await;
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

    // The same file: the lock died with the process.
    let second = Posthorn::start("posthorn #2", &store, sink.port(0)).await;
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
    if !leased_ids.is_empty() {
        note(&format!(
            "sqlite sigkill: {} jobs were leased by the killed process; waiting for their 5 s \
             leases",
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
        "sqlite sigkill: accepted {} emails and {} events ({} requests refused, {} failed by \
         the kill); {delivered_at_kill} messages at the sink at the kill, \
         {undelivered_at_kill} accepted emails not yet delivered, {} jobs leased; after the \
         restart {} messages, {} duplicated ({extra} extra deliveries), {} delivered without \
         a confirmed answer",
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
}
