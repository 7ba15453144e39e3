//! Searches take the needle literally (no LIKE wildcards, no regex metacharacters) and
//! ignore case: contacts by their lower-case address, templates by name or subject with
//! Unicode case folding (SQLite's own folding is ASCII only).

use posthorn_core::model::{Contact, EmailAddress, Template, TemplateType};
use posthorn_core::ports::{ContactPage, ContactQuery, TemplateQuery, Write};
use serde_json::Map;

use crate::fixtures::{commit, now_ms, template, workspace};
use crate::StorePorts;

/// `_` and `%` in a contact search match only themselves; case is ignored; the count
/// agrees.
pub async fn contact_search_is_literal_and_ignores_case(p: &StorePorts) {
    let ws = workspace(p, "contact-search").await;
    let now = now_ms();
    let contact = |address: &str| {
        let email = EmailAddress::parse(address)
            .unwrap_or_else(|e| panic!("fixture address {address:?} is invalid: {e}"));
        Contact::new(
            crate::fixtures::ids(),
            &ws.id,
            email,
            true,
            Map::new(),
            false,
            now,
        )
    };
    let underscore = contact("a_b@example.com");
    let letter = contact("axb@example.com");
    let percent = contact("c%d@example.com");
    commit(
        p.store.as_ref(),
        "contacts with wildcards in their addresses",
        vec![
            Write::InsertContact(underscore.clone()),
            Write::InsertContact(letter),
            Write::InsertContact(percent.clone()),
        ],
    )
    .await;

    let search = |needle: &str| ContactQuery {
        search: Some(needle.to_string()),
        limit: 10,
        ..ContactQuery::default()
    };
    let ids = |page: ContactPage| page.contacts.into_iter().map(|c| c.id).collect::<Vec<_>>();
    let found = p
        .store
        .contacts(&ws.id, &search("A_B"))
        .await
        .expect("contacts failed");
    assert_eq!(ids(found), vec![underscore.id], "searching A_B");
    let found = p
        .store
        .contacts(&ws.id, &search("%"))
        .await
        .expect("contacts failed");
    assert_eq!(ids(found), vec![percent.id], "searching %");
    assert_eq!(
        p.store.count_contacts(&ws.id, &search("_")).await,
        Ok(1),
        "counting _"
    );
    assert_eq!(
        p.store.count_contacts(&ws.id, &search("EXAMPLE")).await,
        Ok(3),
        "counting EXAMPLE"
    );
}

/// Template search matches `.`, `(` and `*` literally and folds Unicode case (`été`
/// finds `ÉTÉ`); the total agrees with the page.
pub async fn template_search_is_literal_and_unicode_case_insensitive(p: &StorePorts) {
    let ws = workspace(p, "template-search").await;
    let now = now_ms();
    let t =
        |name: &str, subject: &str| template(&ws.id, name, subject, TemplateType::Marketing, now);
    let dotted = t("a.b (draft)", "plain");
    let letters = t("axb draft", "plain");
    let summer = t("Newsletter", "ÉTÉ sale");
    commit(
        p.store.as_ref(),
        "templates with metacharacters and accents",
        vec![
            Write::PutTemplate(dotted.clone()),
            Write::PutTemplate(letters),
            Write::PutTemplate(summer.clone()),
        ],
    )
    .await;
    let search = |needle: &str| TemplateQuery {
        search: Some(needle.to_string()),
        limit: 10,
        ..TemplateQuery::default()
    };
    let ids = |(page, total): (Vec<Template>, u64)| {
        assert_eq!(page.len() as u64, total, "the total counts the page");
        page.into_iter().map(|t| t.id).collect::<Vec<_>>()
    };
    let found = p.store.templates(&ws.id, &search("A.B (")).await;
    assert_eq!(
        ids(found.expect("templates failed")),
        vec![dotted.id],
        "searching A.B ("
    );
    let found = p.store.templates(&ws.id, &search("été")).await;
    assert_eq!(
        ids(found.expect("templates failed")),
        vec![summer.id],
        "searching été"
    );
    let found = p.store.templates(&ws.id, &search("DRAFT")).await;
    assert_eq!(
        ids(found.expect("templates failed")).len(),
        2,
        "searching DRAFT"
    );
    let found = p.store.templates(&ws.id, &search("*")).await;
    assert!(
        ids(found.expect("templates failed")).is_empty(),
        "searching *"
    );
}
