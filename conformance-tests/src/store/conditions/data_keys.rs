//! Data keys a JSON path must quote.

use std::collections::HashSet;

use chrono::Utc;
use posthorn_core::ports::{ChangeSet, MatchQuery, Write};
use posthorn_core::segment::{
    matches, Condition, ContactFacts, Field, Filter, Group, Logic, Operator,
};
use serde_json::{json, Map, Value};

use crate::fixtures::{commit, contact, now_ms, workspace};
use crate::ProbedStore;

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

/// Data keys that a JSON path must quote (dots, brackets, `$`, quotes, backslashes, NUL,
/// a tab, non-ASCII, the empty key) reach the same value through the store as in the
/// evaluator: exists, equals and contains on the values below them. Where the adapter
/// cannot store NUL (`stores_nul` is false), a contact with a NUL key is refused (the
/// commit fails, nothing is stored) and the other keys are checked.
pub async fn conditions_on_quoted_data_keys_equal_evaluator(probed: &ProbedStore) {
    let p = &probed.ports;
    let ws = workspace(p, "keys").await;
    let mut keys = vec![
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
    if !probed.stores_nul {
        let mut refused = contact(&ws.id, "nul-key", true, now_ms());
        refused.data.insert("nul\0".to_string(), json!(1));
        let result = p
            .store
            .commit(ChangeSet {
                writes: vec![Write::InsertContact(refused.clone())],
            })
            .await;
        assert!(
            result.is_err(),
            "a NUL key was stored by an adapter that says it cannot store NUL"
        );
        assert_eq!(
            p.store.contact(&ws.id, &refused.id).await,
            Ok(None),
            "the refused contact"
        );
        keys.retain(|key| !key.contains('\0'));
    }
    let mut data = Map::new();
    for (i, key) in keys.iter().enumerate() {
        data.insert(
            key.to_string(),
            json!({ "inner": i, "text": format!("v{i}") }),
        );
    }
    let mut contact = contact(&ws.id, "keys", true, now_ms());
    contact.data = data;
    commit(
        p.store.as_ref(),
        "a contact with awkward data keys",
        vec![Write::InsertContact(contact.clone())],
    )
    .await;
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
            let found = p
                .store
                .contacts_matching(&ws.id, &c, &query, at)
                .await
                .unwrap_or_else(|e| panic!("{path:?}: {e}"));
            assert_eq!(!found.is_empty(), expected, "{path:?} {op:?}");
            checked += usize::from(expected);
        }
    }
    assert!(checked >= keys.len() * 4, "only {checked} positive checks");
}
