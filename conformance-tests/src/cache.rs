//! Checks of the `Cache` port. Expiry is judged by the `now` passed: nothing sleeps.
//!
//! Keys carry a random prefix so that checks may share one backend.

use std::sync::Arc;
use std::time::Duration;

use chrono::TimeDelta;
use posthorn_core::ports::Cache;

use crate::fixtures::{now_ms, unique};

const TTL: Duration = Duration::from_secs(60);

fn key(name: &str) -> String {
    format!("conformance:{}:{name}", unique())
}

/// A value reads back until its ttl has passed, then never again; unknown keys are `None`.
pub async fn get_put_and_expiry(cache: &Arc<dyn Cache>) {
    let k = key("expiry");
    let now = now_ms();
    assert_eq!(cache.get(&k, now).await, Ok(None), "an unknown key");
    cache
        .put(&k, b"v1".to_vec(), TTL, now)
        .await
        .expect("put failed");
    assert_eq!(cache.get(&k, now).await, Ok(Some(b"v1".to_vec())));
    let before = now + TimeDelta::seconds(59);
    assert_eq!(
        cache.get(&k, before).await,
        Ok(Some(b"v1".to_vec())),
        "expired too early"
    );
    let after = now + TimeDelta::seconds(61);
    assert_eq!(
        cache.get(&k, after).await,
        Ok(None),
        "an expired value was returned"
    );
}

/// `put` replaces a value and its expiry.
pub async fn put_replaces(cache: &Arc<dyn Cache>) {
    let k = key("replace");
    let now = now_ms();
    cache
        .put(&k, b"old".to_vec(), TTL, now)
        .await
        .expect("put failed");
    let later = now + TimeDelta::seconds(50);
    cache
        .put(&k, b"new".to_vec(), TTL, later)
        .await
        .expect("put failed");
    let check = now + TimeDelta::seconds(100);
    assert_eq!(
        cache.get(&k, check).await,
        Ok(Some(b"new".to_vec())),
        "put must replace"
    );
}

/// `put_if_absent` writes when there is no live value (also after expiry), never over one.
pub async fn put_if_absent_writes_only_when_absent(cache: &Arc<dyn Cache>) {
    let k = key("absent");
    let now = now_ms();
    assert_eq!(
        cache.put_if_absent(&k, b"first".to_vec(), TTL, now).await,
        Ok(true)
    );
    assert_eq!(
        cache.put_if_absent(&k, b"second".to_vec(), TTL, now).await,
        Ok(false)
    );
    assert_eq!(
        cache.get(&k, now).await,
        Ok(Some(b"first".to_vec())),
        "overwritten"
    );
    let after = now + TimeDelta::seconds(61);
    assert_eq!(
        cache.put_if_absent(&k, b"third".to_vec(), TTL, after).await,
        Ok(true),
        "an expired value must count as absent"
    );
    assert_eq!(cache.get(&k, after).await, Ok(Some(b"third".to_vec())));
}

/// Of many concurrent `put_if_absent` callers exactly one wins, and its value is stored.
pub async fn put_if_absent_has_one_winner(cache: &Arc<dyn Cache>) {
    let k = key("race");
    let now = now_ms();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..20u8 {
        let cache = cache.clone();
        let k = k.clone();
        tasks.spawn(async move {
            let won = cache
                .put_if_absent(&k, vec![i], TTL, now)
                .await
                .expect("put_if_absent");
            won.then_some(i)
        });
    }
    let mut winners = Vec::new();
    while let Some(done) = tasks.join_next().await {
        winners.extend(done.expect("a task panicked"));
    }
    assert_eq!(winners.len(), 1, "winners: {winners:?}");
    assert_eq!(
        cache.get(&k, now).await,
        Ok(Some(vec![winners[0]])),
        "the winner's value"
    );
}

/// `delete` removes a value; deleting an absent key is fine.
pub async fn delete_removes(cache: &Arc<dyn Cache>) {
    let k = key("delete");
    let now = now_ms();
    cache
        .put(&k, b"v".to_vec(), TTL, now)
        .await
        .expect("put failed");
    cache.delete(&k).await.expect("delete failed");
    assert_eq!(
        cache.get(&k, now).await,
        Ok(None),
        "a deleted value was returned"
    );
    cache
        .delete(&k)
        .await
        .expect("deleting an absent key failed");
    assert_eq!(
        cache.put_if_absent(&k, b"w".to_vec(), TTL, now).await,
        Ok(true)
    );
}
