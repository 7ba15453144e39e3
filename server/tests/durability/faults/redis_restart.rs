//! Redis stopped and started under load, on a server of the test's own: while it is down
//! every request that needs a limit is refused with 503 `SERVICE_UNAVAILABLE` and
//! `Retry-After` (the documented fail mode: never unlimited, never a hang) and changes
//! nothing; once Redis is back requests succeed again without a restart of Posthorn.

use std::time::Duration;

use tokio::time::Instant;

use super::load::{self, accepted, show, timeline, Outcome};
use crate::sqlite::{sqlite_rows, DataDir};
use crate::support::posthorn::{note, Posthorn};
use crate::support::private::PrivateRedis;
use crate::support::sink::Sink;

const EVENT: &str = "fault-redis-restart";
const UP: Duration = Duration::from_secs(2);
const DOWN: Duration = Duration::from_secs(6);
const AFTER: Duration = Duration::from_secs(8);
/// How soon after Redis is back requests must succeed again (the connection is
/// re-established in the background with a short, capped back-off).
const RECOVERY: Duration = Duration::from_secs(5);
/// Redis calls time out after 2 s: no answer while it is down may take much longer.
const SLOWEST_REFUSAL: Duration = Duration::from_secs(5);
const GRACE: Duration = Duration::from_millis(500);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_stopped_and_started_under_load() {
    let test = "redis_stopped_and_started_under_load";
    let Some(mut redis) = PrivateRedis::start(test).await else {
        return;
    };
    let data = DataDir::new();
    let sink = Sink::start(1, Duration::ZERO, Duration::ZERO).await;
    let url = redis.url();
    let posthorn = Posthorn::start_with(
        "posthorn",
        &data.store(),
        sink.port(0),
        &[("POSTHORN_REDIS_URL", url.as_str())],
    )
    .await;
    let ws = posthorn.create_workspace("redis-restart").await;

    let running = load::start(&posthorn.api, &ws.secret_key, EVENT);
    tokio::time::sleep(UP).await;
    let stopping = Instant::now();
    redis.stop_server();
    let down_at = Instant::now();
    tokio::time::sleep(DOWN).await;
    let starting = Instant::now();
    redis.start_server().await;
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
        "{test}: {} requests; {} answered before the stop, {} while Redis was down (slowest \
         {slowest_down:?}), {} sent 5 s after its return; first 2xx {first_ok_after:?} after \
         Redis was back",
        outcomes.len(),
        before.len(),
        down.len(),
        recovered.len(),
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
        "only {} requests were answered while Redis was down\n{}",
        down.len(),
        posthorn.logs()
    );
    // Requests that passed before the stop may still finish; none sent later may.
    let unlimited: Vec<&Outcome> = down
        .iter()
        .copied()
        .filter(|o| o.sent >= down_at + GRACE && o.accepted.is_some())
        .collect();
    assert!(
        unlimited.is_empty(),
        "{} requests ran without their limit while Redis was down",
        unlimited.len()
    );
    assert!(
        slowest_down.is_some_and(|t| t <= SLOWEST_REFUSAL),
        "a refusal while Redis was down took {slowest_down:?}"
    );
    assert!(
        first_ok_after.is_some_and(|t| t <= RECOVERY),
        "no request succeeded within {RECOVERY:?} of Redis's return (first: \
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
        "{} of {} requests sent {RECOVERY:?} after Redis's return failed:\n{}\n{}",
        failed_late.len(),
        recovered.len(),
        show(&failed_late),
        posthorn.logs()
    );

    // Exactly the accepted events are stored: a refused request changed nothing.
    let tracked = accepted(&outcomes, "/v1/track");
    drop(posthorn);
    let stored = sqlite_rows(
        &data.db(),
        &format!("SELECT id, NULL FROM events WHERE name = '{EVENT}'"),
    )
    .await;
    assert_eq!(
        stored.len(),
        tracked.len(),
        "stored events differ from the accepted tracks"
    );
}
