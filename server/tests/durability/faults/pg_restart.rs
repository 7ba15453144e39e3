//! PostgreSQL stopped (like a crash) and started again under load, on a cluster of the
//! test's own: while it is down every request is answered 503 `SERVICE_UNAVAILABLE` with
//! `Retry-After` (no hang, no 500), within 5 s of its return requests succeed again, and
//! everything answered 2xx is in the database.

use std::collections::HashSet;
use std::time::Duration;

use tokio::time::Instant;

use super::load::{self, accepted, show, timeline, Outcome};
use crate::support::posthorn::{note, Posthorn};
use crate::support::private::PrivatePg;
use crate::support::sink::Sink;

const EVENT: &str = "fault-pg-restart";
/// Load before the stop, time down, and load after the restart.
const UP: Duration = Duration::from_secs(2);
const DOWN: Duration = Duration::from_secs(6);
const AFTER: Duration = Duration::from_secs(8);
/// How soon after PostgreSQL is back requests must succeed again.
const RECOVERY: Duration = Duration::from_secs(5);
/// Requests in flight when PostgreSQL went away may end any way a lost connection ends
/// (503 all the same); the fail mode is checked on requests sent after this grace.
const GRACE: Duration = Duration::from_millis(500);
/// A statement waits at most 3 s for a connection: no answer while the database is down
/// may take much longer.
const SLOWEST_REFUSAL: Duration = Duration::from_secs(5);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_restarted_under_load() {
    let test = "postgres_restarted_under_load";
    let Some(pg) = PrivatePg::start(test) else {
        return;
    };
    let pg = std::sync::Arc::new(pg);
    let sink = Sink::start(1, Duration::ZERO, Duration::ZERO).await;
    let posthorn = Posthorn::start("posthorn", &pg.url(), sink.port(0)).await;
    let ws = posthorn.create_workspace("pg-restart").await;

    let running = load::start(&posthorn.api, &ws.secret_key, EVENT);
    tokio::time::sleep(UP).await;
    let stopping = Instant::now();
    let handle = std::sync::Arc::clone(&pg);
    tokio::task::spawn_blocking(move || handle.stop_server())
        .await
        .expect("pg_ctl stop");
    let down_at = Instant::now();
    tokio::time::sleep(DOWN).await;
    let starting = Instant::now();
    let handle = std::sync::Arc::clone(&pg);
    tokio::task::spawn_blocking(move || handle.start_server())
        .await
        .expect("pg_ctl start");
    let up_at = Instant::now();
    tokio::time::sleep(AFTER).await;
    let outcomes = running.stop().await;

    let before: Vec<&Outcome> = outcomes.iter().filter(|o| o.answered < stopping).collect();
    // Answered while it was down (after the requests that were in flight at the stop).
    let down: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| o.answered >= down_at + GRACE && o.answered < starting)
        .collect();
    // Sent while it was down: each answered without hanging.
    let slowest_down = outcomes
        .iter()
        .filter(|o| o.sent >= down_at && o.sent < starting)
        .map(|o| o.answered - o.sent)
        .max();
    let recovered: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| o.sent >= up_at + RECOVERY)
        .collect();
    let first_ok_after = outcomes
        .iter()
        .filter(|o| o.sent >= up_at && o.accepted.is_some())
        .map(|o| o.answered - up_at)
        .min();
    note(&format!(
        "{test}: {} requests; {} answered before the stop ({} 2xx), {} answered while down, \
         {} sent 5 s after the restart; slowest answer to a request sent while down \
         {slowest_down:?}; first 2xx {first_ok_after:?} after PostgreSQL was back (stop took \
         {:?}, start {:?})",
        outcomes.len(),
        before.len(),
        before.iter().filter(|o| o.accepted.is_some()).count(),
        down.len(),
        recovered.len(),
        down_at - stopping,
        up_at - starting,
    ));

    note(&format!(
        "{test}: around the stop: {}",
        timeline(&outcomes, stopping, up_at)
    ));
    assert!(
        before.iter().filter(|o| o.accepted.is_some()).count() >= 10,
        "little was accepted before the stop:\n{}\n{}",
        show(&before),
        posthorn.logs()
    );
    // Never a hang, never anything but success or 503 with Retry-After.
    let odd: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| {
            o.accepted.is_none()
                && !(o.status == Some(503)
                    && o.code.as_deref() == Some("SERVICE_UNAVAILABLE")
                    && o.retry_after.is_some())
        })
        .collect();
    assert!(
        odd.is_empty(),
        "{} answers were neither 2xx nor 503 SERVICE_UNAVAILABLE with Retry-After:\n{}\n{}",
        odd.len(),
        show(&odd),
        posthorn.logs()
    );
    assert!(
        down.len() >= load::CLIENTS / 2,
        "only {} requests were answered while PostgreSQL was down: the API hangs instead of \
         answering 503\n{}",
        down.len(),
        posthorn.logs()
    );
    // Requests that passed before the stop may still finish; none sent later may.
    let down_ok: Vec<&Outcome> = down
        .iter()
        .copied()
        .filter(|o| o.sent >= down_at + GRACE && o.accepted.is_some())
        .collect();
    assert!(
        down_ok.is_empty(),
        "{} requests succeeded while PostgreSQL was down",
        down_ok.len()
    );
    assert!(
        slowest_down.is_some_and(|t| t <= SLOWEST_REFUSAL),
        "a request sent while PostgreSQL was down took {slowest_down:?} to answer"
    );
    assert!(
        first_ok_after.is_some_and(|t| t <= RECOVERY),
        "no request succeeded within {RECOVERY:?} of PostgreSQL's return (first: \
         {first_ok_after:?})\n{}",
        posthorn.logs()
    );
    let failed_late: Vec<&Outcome> = recovered
        .iter()
        .copied()
        .filter(|o| o.accepted.is_none())
        .collect();
    assert!(
        !recovered.is_empty() && failed_late.is_empty(),
        "{} of {} requests sent {RECOVERY:?} after PostgreSQL's return failed:\n{}\n{}",
        failed_late.len(),
        recovered.len(),
        show(&failed_late),
        posthorn.logs()
    );

    // Every request answered 2xx is durable.
    let pool = sqlx::PgPool::connect(&pg.url())
        .await
        .expect("connecting to the private cluster");
    for (path, table) in [("/v1/send", "emails"), ("/v1/track", "events")] {
        let ids = accepted(&outcomes, path);
        let sql = format!("SELECT id FROM {table} WHERE id = ANY($1)");
        let stored: Vec<(String,)> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(&ids)
            .fetch_all(&pool)
            .await
            .expect("reading the accepted records");
        let stored: HashSet<String> = stored.into_iter().map(|(id,)| id).collect();
        let lost: Vec<&String> = ids.iter().filter(|id| !stored.contains(*id)).collect();
        assert!(
            lost.is_empty(),
            "{} of {} {path} answered 2xx are not in {table}: {:?}",
            lost.len(),
            ids.len(),
            lost.iter().take(5).collect::<Vec<_>>()
        );
    }
    pool.close().await;
    drop(posthorn);
}
