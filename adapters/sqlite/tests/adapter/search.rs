//! Searches treat wildcards and regex metacharacters literally and ignore case (contacts:
//! ASCII-lowered addresses; templates: Unicode case, where SQLite's own folding is ASCII).

use posthorn_conformance::fixtures;
use posthorn_core::model::TemplateType;
use posthorn_core::ports::{ContactQuery, Store, TemplateQuery, Write};

use super::{changes, contact, now, workspace};
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn template_search_is_literal_and_unicode_case_insensitive() {
    let (store, db) = support::fresh().await;
    let ws = workspace();
    let t = |name: &str, subject: &str| {
        fixtures::template(&ws.id, name, subject, TemplateType::Marketing, now())
    };
    let dotted = t("a.b (draft)", "plain");
    let letters = t("axb draft", "plain");
    let summer = t("Newsletter", "ÉTÉ sale");
    store
        .commit(changes(vec![
            Write::PutTemplate(dotted.clone()),
            Write::PutTemplate(letters.clone()),
            Write::PutTemplate(summer.clone()),
        ]))
        .await
        .expect("insert");
    let search = |needle: &str| TemplateQuery {
        search: Some(needle.to_string()),
        limit: 10,
        ..TemplateQuery::default()
    };
    let ids = |(page, total): (Vec<posthorn_core::model::Template>, u64)| {
        assert_eq!(page.len() as u64, total);
        page.into_iter().map(|t| t.id).collect::<Vec<_>>()
    };
    let found = store
        .templates(&ws.id, &search("A.B ("))
        .await
        .expect("search");
    assert_eq!(ids(found), vec![dotted.id.clone()]);
    let found = store
        .templates(&ws.id, &search("été"))
        .await
        .expect("search");
    assert_eq!(ids(found), vec![summer.id.clone()]);
    let found = store
        .templates(&ws.id, &search("DRAFT"))
        .await
        .expect("search");
    assert_eq!(ids(found).len(), 2);
    let found = store.templates(&ws.id, &search("*")).await.expect("search");
    assert!(ids(found).is_empty());
    support::finish(store, db).await;
}
