//! Data keys that a JSON path must quote (dots, brackets, quotes, backslashes, NUL) reach
//! the same value in SQL as in the evaluator.

use std::collections::HashSet;

use chrono::Utc;
use posthorn_core::model::{Contact, EmailAddress};
use posthorn_core::ports::{MatchQuery, Store, Write};
use posthorn_core::segment::{
    matches, Condition, ContactFacts, Field, Filter, Group, Logic, Operator,
};
use serde_json::{json, Map, Value};

use super::{changes, now, workspace};
use crate::support;

fn condition(path: &[&str], op: Operator, value: Option<Value>) -> Condition {
    Condition {
        logic: Logic::And,
        groups: vec![Group {
            filters: vec![Filter {
                field: Field::Data(path.iter().map(|k| k.to_string()).collect()),
                op,
                value,
                unit: None,
            }],
            conditions: None,
        }],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn awkward_keys_resolve_like_the_evaluator() {
    let (store, db) = support::fresh().await;
    let ws = workspace();
    let keys = [
        "a.b",
        "[0]",
        "$",
        "say \"hi\"",
        "back\\slash",
        "nul\0",
        "tab\t",
        "ünï",
        "",
    ];
    let mut data = Map::new();
    for (i, key) in keys.iter().enumerate() {
        data.insert(
            key.to_string(),
            json!({ "inner": i, "text": format!("v{i}") }),
        );
    }
    let email = EmailAddress::parse("keys@example.com").expect("address");
    let contact = Contact::new(&ws.id, email, true, data, false, now());
    store
        .commit(changes(vec![Write::InsertContact(contact.clone())]))
        .await
        .expect("insert");
    let none = HashSet::new();
    let facts = ContactFacts {
        contact: &contact,
        events: &[],
        activity: &[],
        segments: &none,
    };
    let at = Utc::now();
    let query = MatchQuery {
        limit: 10,
        ..MatchQuery::default()
    };
    let mut checked = 0;
    for (i, key) in keys.iter().enumerate() {
        for (path, op, value) in [
            (vec![*key], Operator::Exists, None),
            (vec![*key, "inner"], Operator::Equals, Some(json!(i))),
            (vec![*key, "inner"], Operator::Equals, Some(json!(i + 1))),
            (
                vec![*key, "text"],
                Operator::Equals,
                Some(json!(format!("v{i}"))),
            ),
            (
                vec![*key, "text"],
                Operator::Contains,
                Some(json!(format!("V{i}"))),
            ),
            (vec![*key, "missing"], Operator::Exists, None),
        ] {
            let c = condition(&path, op, value);
            let expected = matches(&c, &facts, at);
            let found = store
                .contacts_matching(&ws.id, &c, &query, at)
                .await
                .unwrap_or_else(|e| panic!("{path:?}: {e}"));
            assert_eq!(!found.is_empty(), expected, "{path:?} {op:?}");
            checked += usize::from(expected);
        }
    }
    assert!(checked >= keys.len() * 4, "only {checked} positive checks");
    support::finish(store, db).await;
}
