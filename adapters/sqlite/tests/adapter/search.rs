//! Contact search treats LIKE wildcards literally and ignores case.

use posthorn_core::ports::{ContactQuery, Store, Write};

use super::{changes, contact, workspace};
use crate::support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_wildcards_are_literal() {
    let (store, db) = support::fresh().await;
    let ws = workspace();
    let underscore = contact(&ws.id, "a_b@example.com");
    let letter = contact(&ws.id, "axb@example.com");
    let percent = contact(&ws.id, "c%d@example.com");
    store
        .commit(changes(vec![
            Write::InsertContact(underscore.clone()),
            Write::InsertContact(letter.clone()),
            Write::InsertContact(percent.clone()),
        ]))
        .await
        .expect("insert");

    let search = |needle: &str| ContactQuery {
        search: Some(needle.to_string()),
        limit: 10,
        ..ContactQuery::default()
    };
    let ids = |page: posthorn_core::ports::ContactPage| {
        page.contacts.into_iter().map(|c| c.id).collect::<Vec<_>>()
    };
    let found = store
        .contacts(&ws.id, &search("A_B"))
        .await
        .expect("search");
    assert_eq!(ids(found), vec![underscore.id.clone()]);
    let found = store.contacts(&ws.id, &search("%")).await.expect("search");
    assert_eq!(ids(found), vec![percent.id.clone()]);
    let n = store
        .count_contacts(&ws.id, &search("_"))
        .await
        .expect("count");
    assert_eq!(n, 1);
    let n = store
        .count_contacts(&ws.id, &search("EXAMPLE"))
        .await
        .expect("count");
    assert_eq!(n, 3);
    support::finish(store, db).await;
}
