//! The SQL that recognises timestamps in contact data, against `parse_timestamp`.

use crate::support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_timestamps_equal_parse_timestamp() {
    let (store, db) = support::fresh().await;
    let candidates = posthorn_conformance::timestamps::candidates(17);
    let got = posthorn_sqlite::testing::sql_timestamps(&store, &candidates)
        .await
        .expect("sql timestamps");
    posthorn_conformance::timestamps::assert_equal_parse_timestamp(&candidates, &got);
    support::finish(store, db).await;
}
