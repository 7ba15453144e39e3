//! The connection: health check and reconnection after the server drops it.

use std::time::Duration;

use chrono::Utc;
use posthorn_core::ports::{Quota, RateLimiter};

use crate::support::{self, raw_cmd};

#[tokio::test]
async fn ping_answers() {
    let connection = support::connection().await;
    connection.ping().await.expect("ping");
    assert!(connection.key_prefix().starts_with("posthorn-test:"));
}

/// The server kills the adapter's connection; after at most a failed call or two the
/// adapter works again on a new one.
///
/// The adapter logs in as a user of its own, so that `CLIENT KILL USER` hits no other
/// test's connection.
#[tokio::test]
async fn reconnects_after_the_server_drops_the_connection() {
    let user = format!("posthorn-test-{}", uuid::Uuid::new_v4().simple());
    let mut raw = support::raw().await;
    let () = raw_cmd(
        &mut raw,
        redis::cmd("ACL")
            .arg("SETUSER")
            .arg(&user)
            .arg("on")
            .arg("nopass")
            .arg("~*")
            .arg("&*")
            .arg("+@all"),
    )
    .await;

    let url = support::url();
    let with_user = url.replacen("redis://", &format!("redis://{user}:x@"), 1);
    let limiter = support::connect(&with_user, &support::prefix())
        .await
        .rate_limiter();
    let quota = Quota {
        limit: 100,
        window: Duration::from_secs(60),
    };
    limiter
        .take("k", 1, quota, Utc::now())
        .await
        .expect("take before the kill");

    let killed: i64 = raw_cmd(
        &mut raw,
        redis::cmd("CLIENT").arg("KILL").arg("USER").arg(&user),
    )
    .await;
    assert!(killed >= 1, "no connection of {user} was killed");

    let mut failures = 0;
    let mut recovered = false;
    for _ in 0..20 {
        match limiter.take("k", 1, quota, Utc::now()).await {
            Ok(decision) => {
                assert!(decision.allowed, "{decision:?}");
                recovered = true;
                break;
            }
            Err(_) => {
                failures += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    let _: i64 = raw_cmd(&mut raw, redis::cmd("ACL").arg("DELUSER").arg(&user)).await;
    assert!(recovered, "still failing after {failures} attempts");
    assert!(
        failures <= 2,
        "{failures} calls failed before the reconnection"
    );
}
