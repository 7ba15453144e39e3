//! Two processes on one Redis (`POSTHORN_REDIS_URL`) share the workspace's API budget and its
//! Idempotency-Key records: a limit holds across processes, and a key used on one process is
//! replayed by the other.
//!
//! Needs `POSTHORN_TEST_REDIS_URL` besides the database; without it the tests print a note
//! and pass, except under `CI=true`, where they fail.

use std::time::Duration;

use chrono::Utc;
use hyper::Method;
use posthorn_core::ports::{window_bounds, Cache, Quota, RateLimiter};
use posthorn_redis::RedisConnection;
use serde_json::json;

use crate::support::http::Answer;
use crate::support::posthorn::{note, test_redis_url, Posthorn, TestDb};
use crate::support::sink::Sink;

/// `rateLimitPerMinute` of the limited workspace.
const LIMIT: u32 = 10;
/// Requests made against it, alternating between the two processes.
const CALLS: u32 = 16;
/// The API's rate-limit window.
const WINDOW: Duration = Duration::from_secs(60);
/// Time the calls of a test may take at most: they start with at least this much left in
/// the current window.
const MARGIN: Duration = Duration::from_secs(15);
/// The event the idempotency test tracks.
const IDEM_EVENT: &str = "durability-idempotent";

/// A Redis key prefix of its own for this run, so that no other run or deployment counts
/// against (or replays into) it.
fn unique_prefix() -> String {
    format!("posthorn-durability:{}:", uuid::Uuid::new_v4())
}

/// Two processes on one fresh database and one Redis, under a key prefix of their own.
struct SharedPair {
    db: TestDb,
    redis_url: String,
    prefix: String,
    /// Kept for the processes' SMTP transport while they run.
    _sink: Sink,
    processes: [Posthorn; 2],
}

/// Starts a [`SharedPair`] for `test`; `None` (after a note) when the test database or
/// Redis is not configured, outside CI.
async fn start_pair(test: &str) -> Option<SharedPair> {
    let redis_url = test_redis_url(test)?;
    let db = TestDb::create(test).await?;
    let prefix = unique_prefix();
    let sink = Sink::start(1, Duration::ZERO, Duration::ZERO).await;
    let env = [
        ("POSTHORN_REDIS_URL", redis_url.as_str()),
        ("POSTHORN_REDIS_PREFIX", prefix.as_str()),
    ];
    let (a, b) = tokio::join!(
        Posthorn::start_with("posthorn A", &db.url, sink.port(0), &env),
        Posthorn::start_with("posthorn B", &db.url, sink.port(0), &env),
    );
    Some(SharedPair {
        db,
        redis_url,
        prefix,
        _sink: sink,
        processes: [a, b],
    })
}

/// Sleeps into the next window unless the current one has at least [`MARGIN`] left; the end
/// of the window the calls then run in.
async fn wait_for_a_roomy_window() -> chrono::DateTime<Utc> {
    let now = Utc::now();
    let (_, end) = window_bounds(now, WINDOW);
    let left = (end - now).to_std().unwrap_or_default();
    if left >= MARGIN {
        return end;
    }
    note(&format!(
        "shared limits: {} ms left in this minute; waiting for the next",
        left.as_millis()
    ));
    // A little past the boundary, so that the processes' clocks agree it has passed.
    tokio::time::sleep(left + Duration::from_millis(250)).await;
    let (_, end) = window_bounds(Utc::now(), WINDOW);
    end
}

/// The header `name` of `answer` as a number; panics when it is missing or not a number.
fn number_header(answer: &Answer, name: &str, what: &str) -> i64 {
    let value = answer
        .header(name)
        .unwrap_or_else(|| panic!("{what}: no {name} header: {:?}", answer.headers));
    value
        .parse()
        .unwrap_or_else(|e| panic!("{what}: {name}: {value:?} is not a number: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_share_the_api_rate_limit() {
    let Some(SharedPair {
        db,
        redis_url,
        prefix,
        _sink,
        processes,
    }) = start_pair("two_processes_share_the_api_rate_limit").await
    else {
        return;
    };
    let ws = processes[0]
        .create_workspace_limited("limited", LIMIT)
        .await;

    let window_end = wait_for_a_roomy_window().await;
    let mut answers = Vec::new();
    for i in 0..CALLS {
        let process = &processes[i as usize % 2];
        let answer = process
            .api
            .call(Method::GET, "/contacts", Some(&ws.secret_key), None)
            .await
            .unwrap_or_else(|e| panic!("call {i} ({}): {e}", process.name));
        answers.push((process.name.as_str(), answer));
    }
    let finished = Utc::now();
    assert!(
        finished < window_end,
        "the calls ran past the end of their rate-limit window ({window_end}); they took too \
         long to prove anything"
    );

    let granted = answers.iter().filter(|(_, a)| a.status == 200).count();
    let refused = answers.iter().filter(|(_, a)| a.status == 429).count();
    let statuses: Vec<String> = answers
        .iter()
        .map(|(name, a)| format!("{name}: {}", a.status))
        .collect();
    assert_eq!(
        (granted, refused),
        (LIMIT as usize, (CALLS - LIMIT) as usize),
        "(granted, refused) of {CALLS} calls with a limit of {LIMIT} shared by two processes: \
         {statuses:?}\n{}\n{}",
        processes[0].logs(),
        processes[1].logs()
    );
    let mut remaining_seen = Vec::new();
    for (i, (name, answer)) in answers.iter().enumerate() {
        let what = format!("call {i} (GET /contacts on {name})");
        let i = i as i64;
        let limit = i64::from(LIMIT);
        // The budget is taken in call order, whichever process answers.
        let expected_status = if i < limit { 200 } else { 429 };
        assert_eq!(
            answer.status, expected_status,
            "{what}: status; body: {}; statuses: {statuses:?}",
            answer.body
        );
        assert_eq!(
            number_header(answer, "ratelimit-limit", &what),
            limit,
            "{what}: RateLimit-Limit"
        );
        let remaining = number_header(answer, "ratelimit-remaining", &what);
        remaining_seen.push(remaining);
        assert_eq!(
            remaining,
            (limit - 1 - i).max(0),
            "{what}: RateLimit-Remaining does not count down across the processes"
        );
        let reset = number_header(answer, "ratelimit-reset", &what);
        assert!(
            (0..=60).contains(&reset),
            "{what}: RateLimit-Reset {reset} is not within the minute"
        );
        if answer.status == 429 {
            let body = &answer.body;
            assert_eq!(body["success"], json!(false), "{what}: body {body}");
            assert_eq!(
                body["error"]["code"],
                json!("RATE_LIMIT_EXCEEDED"),
                "{what}: body {body}"
            );
            assert_eq!(
                body["error"]["statusCode"],
                json!(429),
                "{what}: body {body}"
            );
            assert!(
                body["error"]["message"].is_string() && body["error"]["requestId"].is_string(),
                "{what}: body {body}"
            );
            let retry_after = number_header(answer, "retry-after", &what);
            assert!(
                (1..=60).contains(&retry_after),
                "{what}: Retry-After {retry_after} is not within the minute"
            );
        } else {
            // `GET /contacts` answers `{data, cursor, hasMore, total}`.
            assert!(answer.body["data"].is_array(), "{what}: {}", answer.body);
        }
    }

    // The counter is in the test's Redis under the run's prefix (a take of 0 only reads).
    let redis = RedisConnection::connect(&redis_url, &prefix)
        .await
        .unwrap_or_else(|e| panic!("connecting to {redis_url}: {e}"));
    let quota = Quota {
        limit: LIMIT,
        window: WINDOW,
    };
    let read_at = Utc::now();
    let counter = redis
        .rate_limiter()
        .take(&format!("api:{}", ws.id), 0, quota, read_at)
        .await
        .unwrap_or_else(|e| panic!("reading the rate counter: {e}"));
    if read_at < window_end {
        assert_eq!(
            counter.remaining, 0,
            "the workspace's counter under {prefix:?} in Redis"
        );
    }
    note(&format!(
        "shared limits: {CALLS} calls on A and B with a limit of {LIMIT}: {granted} granted, \
         {refused} refused; RateLimit-Remaining {remaining_seen:?}"
    ));

    drop(processes);
    db.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotency_key_used_on_one_process_replays_on_the_other() {
    let Some(SharedPair {
        db,
        redis_url,
        prefix,
        _sink,
        processes: [a, b],
    }) = start_pair("an_idempotency_key_used_on_one_process_replays_on_the_other").await
    else {
        return;
    };
    let ws = a.create_workspace("idempotent").await;
    let key = format!("durability-{}", uuid::Uuid::new_v4());
    let body = json!({
        "email": "idempotent@example.org",
        "event": IDEM_EVENT,
        "data": {"attempt": 1},
    });
    let track = |process: &Posthorn, body: serde_json::Value| {
        let api = process.api.clone();
        let secret_key = ws.secret_key.clone();
        let key = key.clone();
        let what = format!("POST /v1/track on {}", process.name);
        async move {
            let answer = api
                .call_with_headers(
                    Method::POST,
                    "/v1/track",
                    Some(&secret_key),
                    Some(&body),
                    &[("idempotency-key", &key)],
                )
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            (what, answer)
        }
    };

    let (what, first) = track(&a, body.clone()).await;
    assert!(
        first.ok(),
        "{what}: {} {}\n{}",
        first.status,
        first.body,
        a.logs()
    );
    assert_eq!(
        first.header("idempotent-replayed"),
        None,
        "{what}: a first use was marked as replayed"
    );
    let event_id = first.body["data"]["event"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: no data.event in {}", first.body))
        .to_string();

    let (what, replayed) = track(&b, body.clone()).await;
    assert_eq!(
        (replayed.status, &replayed.body),
        (first.status, &first.body),
        "{what}: the same key and body did not replay A's answer\n{}",
        b.logs()
    );
    assert_eq!(
        replayed.header("idempotent-replayed"),
        Some("true"),
        "{what}: headers {:?}",
        replayed.headers
    );
    assert!(
        replayed
            .header("content-type")
            .is_some_and(|ct| ct.starts_with("application/json")),
        "{what}: content type of the replay: {:?}",
        replayed.headers
    );

    // The stored body hash is shared too: another body under the key is refused on B.
    let mut changed = body.clone();
    changed["data"]["attempt"] = json!(2);
    let (what, reused) = track(&b, changed).await;
    assert_eq!(
        reused.status, 422,
        "{what}: the key with another body: {}",
        reused.body
    );
    assert_eq!(
        reused.body["success"],
        json!(false),
        "{what}: {}",
        reused.body
    );
    assert_eq!(
        reused.body["error"]["code"],
        json!("IDEMPOTENCY_KEY_REUSED"),
        "{what}: {}",
        reused.body
    );

    // One event was stored, the one A answered with, and both processes see just that one.
    for process in [&a, &b] {
        let events = process
            .api
            .expect(
                200,
                Method::GET,
                &format!("/events?eventName={IDEM_EVENT}"),
                Some(&ws.secret_key),
                None,
            )
            .await;
        let ids: Vec<&str> = events["events"]
            .as_array()
            .unwrap_or_else(|| panic!("GET /events on {}: no events in {events}", process.name))
            .iter()
            .filter_map(|e| e["id"].as_str())
            .collect();
        assert_eq!(
            ids,
            vec![event_id.as_str()],
            "GET /events on {}: the events named {IDEM_EVENT}",
            process.name
        );
    }

    // The record is in the test's Redis under the run's prefix; remove it (it would live 24 h).
    let redis = RedisConnection::connect(&redis_url, &prefix)
        .await
        .unwrap_or_else(|e| panic!("connecting to {redis_url}: {e}"));
    let record_key = format!("idem:{}:{key}", ws.id);
    let cache = redis.cache();
    let stored = cache
        .get(&record_key, Utc::now())
        .await
        .unwrap_or_else(|e| panic!("reading the idempotency record: {e}"));
    assert!(
        stored.is_some(),
        "no idempotency record under {prefix}cache:{record_key} in Redis"
    );
    cache
        .delete(&record_key)
        .await
        .unwrap_or_else(|e| panic!("deleting the idempotency record: {e}"));
    note(&format!(
        "shared idempotency: key used on A, replayed on B (event {event_id}), refused with \
         another body"
    ));

    drop((a, b));
    db.drop().await;
}
