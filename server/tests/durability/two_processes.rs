//! Two processes on one database share the delivery work and deliver each email once.

use std::time::Duration;

use hyper::Method;

use crate::support::posthorn::{note, Posthorn, TestDb, ADMIN_TOKEN};
use crate::support::sink::Sink;
use crate::support::{
    burst, duplicates, missing, mixed_calls, sample, unconfirmed, wait_for_idle_queue, wait_until,
};

const SENDS: usize = 400;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_share_the_work_without_duplicates() {
    let Some(db) = TestDb::create("two_processes_share_the_work_without_duplicates").await else {
        return;
    };
    // One sink listener per process, so that each delivery names its process.
    let sink = Sink::start(2, Duration::from_millis(5), Duration::from_millis(15)).await;
    // Started together, as replicas are.
    let (a, b) = tokio::join!(
        Posthorn::start("posthorn A", &db.url, sink.port(0)),
        Posthorn::start("posthorn B", &db.url, sink.port(1)),
    );
    let ws = a.create_workspace("shared").await;

    let accepted = burst(
        vec![a.api.clone(), b.api.clone()],
        ws.secret_key.clone(),
        mixed_calls(SENDS, 0),
    )
    .await;
    assert!(
        accepted.emails.len() == SENDS,
        "the APIs accepted {} of {SENDS} sends (refused {:?}, {} failed; first problem: {:?})\n{}\n{}",
        accepted.emails.len(),
        accepted.refused,
        accepted.failed,
        accepted.first_problem,
        a.logs(),
        b.logs()
    );

    let complete = wait_until(Duration::from_secs(40), || {
        missing(&sink, &accepted.emails).is_empty()
    })
    .await;
    if !complete {
        let lost = missing(&sink, &accepted.emails);
        panic!(
            "{} accepted emails did not reach the sink within 40 s: {}\n{}\n{}",
            lost.len(),
            sample(&lost),
            a.logs(),
            b.logs()
        );
    }
    let (_, _, dead) = wait_for_idle_queue(&a, Duration::from_secs(20))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}\n{}", a.logs(), b.logs()));
    assert_eq!(dead, 0, "jobs were dead-lettered");

    let counts = sink.counts();
    let dups = duplicates(&counts);
    let deliveries = sink.deliveries();
    let by_a = deliveries.iter().filter(|d| d.listener == 0).count();
    let by_b = deliveries.iter().filter(|d| d.listener == 1).count();
    // The first run bootstraps `default`; two first runs at once may both do it.
    let workspaces = a
        .api
        .expect(
            200,
            Method::GET,
            "/admin/workspaces",
            Some(ADMIN_TOKEN),
            None,
        )
        .await;
    let defaults = workspaces["data"]
        .as_array()
        .map_or(0, |ws| ws.iter().filter(|w| w["name"] == "default").count());
    note(&format!(
        "two processes: {} emails, {} messages at the sink ({by_a} by A, {by_b} by B), {} \
         duplicated; `default` workspaces bootstrapped: {defaults}",
        accepted.emails.len(),
        deliveries.len(),
        dups.len()
    ));
    assert!(
        dups.is_empty(),
        "{} emails were delivered more than once without any crash: {dups:?}",
        dups.len()
    );
    assert_eq!(
        unconfirmed(&counts, &accepted.emails),
        0,
        "the sink got emails the APIs never confirmed"
    );
    assert_eq!(deliveries.len(), SENDS, "messages at the sink");
    assert!(
        by_a > 0 && by_b > 0,
        "one process did all the delivery work (A: {by_a}, B: {by_b})"
    );

    drop((a, b));
    db.drop().await;
}
