//! SIGTERM lets in-flight deliveries finish: nothing is left leased, nothing is sent twice.

use std::time::Duration;

use crate::support::posthorn::{note, Posthorn, TestDb};
use crate::support::sink::Sink;
use crate::support::{
    burst, duplicates, missing, mixed_calls, sample, unconfirmed, wait_for_idle_queue, wait_until,
};

const SENDS: usize = 200;
/// Mail at the sink that triggers the SIGTERM.
const TERM_AFTER: usize = 20;
/// How long the process may take to exit after SIGTERM.
const EXIT_WITHIN: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_finishes_in_flight_jobs() {
    let Some(db) = TestDb::create("graceful_shutdown_finishes_in_flight_jobs").await else {
        return;
    };
    // A slow relay, so that deliveries are under way when SIGTERM comes.
    let sink = Sink::start(1, Duration::from_millis(15), Duration::from_millis(30)).await;
    let mut first = Posthorn::start("posthorn #1", &db.url, sink.port(0)).await;
    let ws = first.create_workspace("graceful").await;

    let intake = tokio::spawn(burst(
        vec![first.api.clone()],
        ws.secret_key.clone(),
        mixed_calls(SENDS, 0),
    ));
    let reached = wait_until(Duration::from_secs(30), || {
        sink.count() >= TERM_AFTER || (intake.is_finished() && sink.count() > 0)
    })
    .await;
    assert!(
        reached,
        "only {} messages reached the sink within 30 s\n{}",
        sink.count(),
        first.logs()
    );
    let at_term = sink.count();
    let started = std::time::Instant::now();
    let status = first.sigterm(EXIT_WITHIN).await;
    let took = started.elapsed();
    first.assert_clean_exit(status, EXIT_WITHIN);
    let at_exit = sink.count();
    let accepted = tokio::time::timeout(Duration::from_secs(30), intake)
        .await
        .expect("the burst did not end within 30 s of the shutdown")
        .expect("the burst task panicked");
    assert!(
        !accepted.emails.is_empty(),
        "the API accepted nothing before the shutdown: {accepted:?}"
    );
    // Every job it had claimed was settled before it exited.
    let leased = db.running_jobs().await;
    assert!(
        leased.is_empty(),
        "the gracefully stopped process left {} jobs leased (in-flight work not finished): {:?}\n{}",
        leased.len(),
        leased,
        first.logs()
    );
    let undelivered_at_exit = missing(&sink, &accepted.emails).len();
    assert!(
        at_exit > at_term || undelivered_at_exit > 0,
        "SIGTERM did not land while deliveries ran: all {} accepted emails were at the sink",
        accepted.emails.len()
    );

    let second = Posthorn::start("posthorn #2", &db.url, sink.port(0)).await;
    let restarted = std::time::Instant::now();
    let complete = wait_until(Duration::from_secs(30), || {
        missing(&sink, &accepted.emails).is_empty()
    })
    .await;
    let drained_in = restarted.elapsed();
    if !complete {
        let lost = missing(&sink, &accepted.emails);
        panic!(
            "{} accepted emails did not reach the sink within 30 s of the restart: {}\n{}",
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
    note(&format!(
        "graceful: accepted {} emails ({} refused, {} failed during shutdown); {at_term} at the \
         sink at SIGTERM, {at_exit} at exit ({took:?} later), {undelivered_at_exit} left for the \
         restart (delivered {drained_in:?} after it); {} messages in the end, {} duplicated",
        accepted.emails.len(),
        accepted.refused.values().sum::<usize>(),
        accepted.failed,
        sink.count(),
        dups.len()
    ));
    assert!(
        dups.is_empty(),
        "emails delivered twice across a graceful restart: {dups:?}"
    );
    assert_eq!(
        unconfirmed(&counts, &accepted.emails),
        0,
        "the sink got emails the API never confirmed (an answer lost in a graceful shutdown)"
    );

    drop(second);
    db.drop().await;
}
