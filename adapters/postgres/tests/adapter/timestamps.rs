//! `posthorn_timestamp`, the SQL function that recognises timestamps in contact data,
//! against `parse_timestamp`, under any session time zone and date style.

use chrono::{DateTime, Utc};
use posthorn_core::segment::parse_timestamp;

use crate::support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_timestamps_equal_parse_timestamp() {
    let (store, db) = support::fresh().await;
    let candidates = posthorn_conformance::timestamps::candidates(17);
    let rows: Vec<(String, Option<DateTime<Utc>>)> = sqlx::query_as(
        "SELECT s, posthorn_timestamp(s) FROM unnest($1::text[]) \
         WITH ORDINALITY AS t(s, n) ORDER BY n",
    )
    .bind(&candidates)
    .fetch_all(store.pool())
    .await
    .expect("posthorn_timestamp");
    let (strings, got): (Vec<String>, Vec<Option<DateTime<Utc>>>) = rows.into_iter().unzip();
    assert_eq!(strings, candidates, "one row per candidate, in order");
    posthorn_conformance::timestamps::assert_equal_parse_timestamp(&candidates, &got);
    // The same under another session time zone and date style: the function is immutable.
    let mut tx = store.pool().begin().await.expect("begin");
    sqlx::query("SET LOCAL TimeZone = 'Pacific/Kiritimati'")
        .execute(&mut *tx)
        .await
        .expect("set");
    sqlx::query("SET LOCAL DateStyle = 'SQL, DMY'")
        .execute(&mut *tx)
        .await
        .expect("set");
    let got: Option<DateTime<Utc>> = sqlx::query_scalar("SELECT posthorn_timestamp($1)")
        .bind("2024-03-01T10:00:00.25-03:30")
        .fetch_one(&mut *tx)
        .await
        .expect("select");
    assert_eq!(got, parse_timestamp("2024-03-01T10:00:00.25-03:30"));
    tx.rollback().await.expect("rollback");
    support::finish(store, db).await;
}
