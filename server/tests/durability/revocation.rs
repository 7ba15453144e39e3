//! A revoked key stops working on every process sharing the database within a second,
//! although each process caches authenticated keys.

use std::time::Duration;

use hyper::Method;
use serde_json::json;

use crate::support::posthorn::{Posthorn, TestDb};
use crate::support::sink::Sink;

/// The promise of docs/operations.md.
const SPREAD: Duration = Duration::from_secs(1);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_key_stops_working_on_every_process_within_a_second() {
    let Some(db) = TestDb::create("a_revoked_key_stops_working_on_every_process").await else {
        return;
    };
    let sink = Sink::start(1, Duration::ZERO, Duration::ZERO).await;
    let (a, b) = tokio::join!(
        Posthorn::start("posthorn A", &db.url, sink.port(0)),
        Posthorn::start("posthorn B", &db.url, sink.port(0)),
    );
    let ws = a.create_workspace("revocation").await;
    let created = a
        .api
        .expect(
            201,
            Method::POST,
            "/keys",
            Some(&ws.secret_key),
            Some(&json!({"name": "to revoke"})),
        )
        .await;
    let key = created["secretKey"]
        .as_str()
        .expect("secretKey")
        .to_string();
    let id = created["id"].as_str().expect("id").to_string();

    // B authenticates the key and caches it; three calls, so it is served from the cache.
    for _ in 0..3 {
        b.api
            .expect(200, Method::GET, "/contacts", Some(&key), None)
            .await;
    }

    a.api
        .expect(
            204,
            Method::DELETE,
            &format!("/keys/{id}"),
            Some(&ws.secret_key),
            None,
        )
        .await;
    let revoked_at = tokio::time::Instant::now();
    loop {
        let answer = b
            .api
            .call(Method::GET, "/contacts", Some(&key), None)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        if answer.status == 401 {
            assert_eq!(answer.body["error"]["code"], "INVALID_API_KEY");
            break;
        }
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert!(
            revoked_at.elapsed() < SPREAD,
            "process B still accepted the revoked key {:?} after it was revoked on A\n{}",
            revoked_at.elapsed(),
            b.logs()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The workspace's own key is unaffected on both.
    for p in [&a, &b] {
        p.api
            .expect(200, Method::GET, "/contacts", Some(&ws.secret_key), None)
            .await;
    }
    drop((a, b));
    db.drop().await;
}
