//! `posthorn export --to postgres://…` moves a SQLite store to PostgreSQL: every table
//! arrives whole, the first-run keys work there, and the jobs pending at the export run
//! there exactly once. The export runs while the owner of the file still holds it.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt;
use hyper::Method;
use posthorn_core::ports::{ChangeSet, Store, SystemClock, Write};
use posthorn_core::{Engine, Settings};
use posthorn_memory::{CapturingTransport, MemoryCache, MemoryRateLimiter};
use posthorn_server::{router, AppState};
use posthorn_sqlite::{SqliteOptions, SqliteStore};
use serde_json::{json, Value};
use sqlx::postgres::PgConnectOptions;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection};
use tower::ServiceExt;

use super::{run_to_exit, DataDir};
use crate::support::posthorn::{Posthorn, TestDb};
use crate::support::sink::Sink;
use crate::support::{wait_for_idle_queue, wait_until};

/// The tables every export must carry (the SQLite schema may have more; all are compared).
const TABLES: &[&str] = &[
    "campaigns",
    "contacts",
    "domains",
    "emails",
    "events",
    "jobs",
    "key_sets",
    "segment_members",
    "segments",
    "sns_messages",
    "templates",
    "workspaces",
];
const CONTACTS: usize = 12;
const SENDS: usize = 20;

/// One in-process request to `app`; (status, JSON body).
async fn call(
    app: &axum::Router,
    method: Method,
    path: &str,
    key: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {key}"));
    if body.is_some() {
        req = req.header("content-type", "application/json");
    }
    let req = req
        .body(Body::from(body.map(|b| b.to_string()).unwrap_or_default()))
        .expect("request");
    let res = app.clone().oneshot(req).await.expect("infallible");
    let status = res.status().as_u16();
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

async fn expect(
    app: &axum::Router,
    status: u16,
    method: Method,
    path: &str,
    key: &str,
    body: Value,
) -> Value {
    let (got, answer) = call(app, method, path, key, Some(body)).await;
    assert_eq!(got, status, "{path}: {answer}");
    answer
}

/// Fills a SQLite store through the API of an engine without workers, so that every job
/// stays pending; returns the store, still open (its owner holds the file's lock, as a
/// running server does), and the first-run keys (public, secret).
async fn fill(db: &Path) -> (SqliteStore, String, String) {
    let store = SqliteStore::open(db, SqliteOptions::default())
        .await
        .expect("open the SQLite store");
    let engine = Engine {
        store: Arc::new(store.clone()),
        jobs: Arc::new(store.clone()),
        transport: Arc::new(CapturingTransport::new()),
        clock: Arc::new(SystemClock),
        dns: Arc::new(posthorn_dns::StaticDns::new()),
        rate_limiter: Arc::new(MemoryRateLimiter::new()),
        cache: Arc::new(MemoryCache::new()),
        webhooks: std::sync::Arc::new(posthorn_core::ports::RefusingWebhookSink),
        inbound: Default::default(),
        settings: Settings::default(),
    };
    let (_, keys) = engine
        .bootstrap("example.com")
        .await
        .expect("bootstrap")
        .expect("a first run on a new file");
    let (pk, sk) = (keys.public_key, keys.secret_key);
    let app = router(AppState::new(engine, None));
    for i in 0..CONTACTS {
        expect(
            &app,
            201,
            Method::POST,
            "/contacts",
            &sk,
            json!({"email": format!("member{i}@example.org"), "data": {"i": i}}),
        )
        .await;
    }
    expect(
        &app,
        201,
        Method::POST,
        "/templates",
        &sk,
        json!({"name": "Welcome", "subject": "Hi", "body": "<p>Hi</p>", "type": "TRANSACTIONAL"}),
    )
    .await;
    let segment = expect(
        &app,
        201,
        Method::POST,
        "/segments",
        &sk,
        json!({"name": "Firsts", "type": "STATIC"}),
    )
    .await;
    let segment_id = segment["id"]
        .as_str()
        .or_else(|| segment["data"]["id"].as_str())
        .unwrap_or_else(|| panic!("POST /segments: no id in {segment}"))
        .to_string();
    expect(
        &app,
        200,
        Method::POST,
        &format!("/segments/{segment_id}/members"),
        &sk,
        json!({"emails": ["member0@example.org", "member1@example.org"]}),
    )
    .await;
    for i in 0..SENDS {
        expect(
            &app,
            200,
            Method::POST,
            "/v1/send",
            &sk,
            json!({
            "to": format!("rcpt{i}@example.org"), "from": "hello@example.com",
            "subject": format!("Moved {i}"), "body": "<p>Hello</p>"}),
        )
        .await;
    }
    expect(
        &app,
        200,
        Method::POST,
        "/v1/track",
        &pk,
        json!({"email": "member2@example.org", "event": "moved"}),
    )
    .await;
    let campaign = expect(
        &app,
        201,
        Method::POST,
        "/campaigns",
        &sk,
        json!({
        "name": "Move", "subject": "News", "body": "<p>News</p>", "from": "news@example.com",
        "audienceType": "SEGMENT", "segmentId": segment_id}),
    )
    .await;
    let campaign_id = campaign["data"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("POST /campaigns: no id in {campaign}"))
        .to_string();
    let (status, sent) = call(
        &app,
        Method::POST,
        &format!("/campaigns/{campaign_id}/send"),
        &sk,
        Some(json!({})),
    )
    .await;
    assert!(
        (200..300).contains(&status),
        "sending the campaign: {status} {sent}"
    );
    // A processed SNS message (POST /webhooks/sns records them).
    store
        .commit(ChangeSet {
            writes: vec![Write::RecordSnsMessage {
                message_id: "sns-message-1".into(),
                processed_at: chrono::Utc::now(),
            }],
        })
        .await
        .expect("record an SNS message");
    drop(app);
    (store, pk, sk)
}

async fn sqlite_counts(db: &Path) -> BTreeMap<String, i64> {
    let mut conn = SqliteConnectOptions::new()
        .filename(db)
        .read_only(true)
        .connect()
        .await
        .expect("open the SQLite file");
    let tables: Vec<String> = sqlx::query_scalar(
        // `contact_counts` and the two parts of the event name index are derived by
        // SQLite's triggers; the export leaves them behind. `email_contents` is the part of
        // `emails` SQLite keeps apart: it arrives in PostgreSQL's `emails`.
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
         AND name NOT IN ('_sqlx_migrations', 'contact_counts', \
                          'event_names_recent', 'event_names_filed', 'email_contents')",
    )
    .fetch_all(&mut conn)
    .await
    .expect("tables");
    let mut counts = BTreeMap::new();
    for table in tables {
        let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT count(*) FROM \"{table}\""
        )))
        .fetch_one(&mut conn)
        .await
        .expect("count");
        counts.insert(table, n);
    }
    let _ = conn.close().await;
    counts
}

async fn pg_count(url: &str, sql: &str) -> i64 {
    let mut conn = url
        .parse::<PgConnectOptions>()
        .expect("a PostgreSQL URL")
        .connect()
        .await
        .expect("connect to the test database");
    let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_string()))
        .fetch_one(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let _ = conn.close().await;
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_export_to_postgres_keeps_everything() {
    let Some(db) = TestDb::create("sqlite_export_to_postgres_keeps_everything").await else {
        return;
    };
    let data = DataDir::new();
    let (owner, pk, sk) = fill(&data.db()).await;
    let before = sqlite_counts(&data.db()).await;
    for table in TABLES {
        assert!(
            before.get(*table).is_some_and(|n| *n > 0),
            "the SQLite store has no `{table}` rows to export: {before:?}"
        );
    }

    let store = data.store();
    let (status, output) = run_to_exit(
        &["export", "--to", &db.url],
        &[("POSTHORN_STORE", &store)],
        Duration::from_secs(60),
    )
    .await;
    assert!(status.success(), "export failed: {status}\n{output}");
    // It read beside the owner of the file, which is still there and unchanged.
    assert_eq!(sqlite_counts(&data.db()).await, before);
    owner.close().await;
    drop(owner);
    for (table, n) in &before {
        let in_pg = pg_count(&db.url, &format!("SELECT count(*) FROM \"{table}\"")).await;
        assert_eq!(
            in_pg, *n,
            "table `{table}`: {n} rows in SQLite, {in_pg} in PostgreSQL"
        );
    }
    let pending = before["jobs"];

    // A second export finds the database filled and refuses, changing nothing.
    let (status, output) = run_to_exit(
        &["export", "--to", &db.url],
        &[("POSTHORN_STORE", &store)],
        Duration::from_secs(60),
    )
    .await;
    assert!(
        !status.success() && output.contains("is not empty"),
        "a second export was not refused: {status}\n{output}"
    );
    assert_eq!(
        pg_count(&db.url, "SELECT count(*) FROM jobs").await,
        pending
    );

    // A server on the copy: the first-run keys work, the pending jobs run exactly once.
    let sink = Sink::start(1, Duration::from_millis(1), Duration::from_millis(5)).await;
    let server = Posthorn::start("posthorn on the PostgreSQL copy", &db.url, sink.port(0)).await;
    assert!(
        !server.logs().contains("First run"),
        "the copy looked empty to the server\n{}",
        server.logs()
    );
    let page = server
        .api
        .expect(200, Method::GET, "/contacts?limit=1", Some(&sk), None)
        .await;
    // Every exported contact is counted (the copy's counts are rebuilt after the export).
    assert!(
        page["total"].as_u64().is_some_and(|n| n >= CONTACTS as u64),
        "GET /contacts on the copy: {page}"
    );
    assert_eq!(
        page["total"].as_i64(),
        Some(before["contacts"]),
        "GET /contacts on the copy: {page}"
    );
    server
        .api
        .expect(
            200,
            Method::POST,
            "/v1/track",
            Some(&pk),
            Some(&json!({"email": "member3@example.org", "event": "arrived"})),
        )
        .await;
    let (_, _, dead) = wait_for_idle_queue(&server, Duration::from_secs(60))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", server.logs()));
    assert_eq!(dead, 0, "jobs died on the copy\n{}", server.logs());
    let emails = pg_count(&db.url, "SELECT count(*) FROM emails").await;
    // Every send, and the campaign to its two members (expanded on PostgreSQL).
    assert_eq!(emails, (SENDS + 2) as i64, "emails on the copy");
    // SQLite keeps the content in a table of its own; the copy has it in `emails`.
    let without_body = pg_count(&db.url, "SELECT count(*) FROM emails WHERE html = ''").await;
    assert_eq!(
        without_body, 0,
        "emails that arrived without their HTML body"
    );
    let delivered = wait_until(Duration::from_secs(10), || {
        sink.counts().len() as i64 == emails
    })
    .await;
    let counts = sink.counts();
    assert!(
        delivered,
        "{} of {emails} emails reached the sink\n{}",
        counts.len(),
        server.logs()
    );
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n != 1).collect();
    assert!(
        twice.is_empty(),
        "emails delivered more than once: {twice:?}"
    );
    let not_sent = pg_count(
        &db.url,
        "SELECT count(*) FROM emails WHERE status <> 'SENT'",
    )
    .await;
    assert_eq!(not_sent, 0, "emails not SENT on the copy");
    let ids: HashSet<&String> = counts.keys().collect();
    assert_eq!(ids.len() as i64, emails);

    drop(server);
    db.drop().await;
}
