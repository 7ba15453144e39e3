//! Migrations: applying them again, on the same pool or a new handle, changes nothing.

use posthorn_core::ports::{Store, Write};

use super::{changes, workspace};
use crate::support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrating_again_changes_nothing() {
    let (store, db) = support::fresh().await;
    let ws = workspace();
    store
        .commit(changes(vec![Write::PutWorkspace(ws.clone())]))
        .await
        .expect("put");
    store.migrate().await.expect("second migration run");
    let again = posthorn_postgres::PgStore::from_pool(store.pool().clone());
    again.migrate().await.expect("third migration run");
    assert_eq!(again.workspace(&ws.id).await.expect("read"), Some(ws));
    drop(again);
    support::finish(store, db).await;
}
