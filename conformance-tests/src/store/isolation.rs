//! Workspace isolation: no read reveals another workspace's records.

use posthorn_core::model::{NewKeySet, TemplateType};
use posthorn_core::ports::{ContactQuery, EventQuery, TemplateQuery, Write};

use crate::fixtures::{
    commit, contact, domain, email_record, event, now_ms, template, unique, workspace,
};
use crate::StorePorts;

/// Every read with another workspace's id returns `None` or nothing for the first
/// workspace's records, and the same email may exist in both.
pub async fn isolation_between_workspaces(p: &StorePorts) {
    let a = workspace(p, "owner").await;
    let b = workspace(p, "stranger").await;
    let now = now_ms();

    let keys = NewKeySet::generate(&a.id, None, vec![], now);
    let dom = domain(&a.id, &format!("{}.example.org", unique()), now);
    let mut pending = contact(&a.id, "pending", true, now);
    pending.status = posthorn_core::model::ContactStatus::Pending;
    pending.expires_at = Some(now);
    let active = contact(&a.id, "active", true, now);
    let tpl = template(&a.id, "secret", "Secret", TemplateType::Marketing, now);
    let mail = email_record(&active, now);
    let ev = event(&a.id, "signup", Some(&active.id), now);
    commit(
        p.store.as_ref(),
        "records of workspace A",
        vec![
            Write::PutKeySet(keys.record.clone()),
            Write::InsertDomain(dom),
            Write::InsertContact(active.clone()),
            Write::InsertContact(pending.clone()),
            Write::PutTemplate(tpl.clone()),
            Write::InsertEmail(mail.clone()),
            Write::AppendEvent(ev),
        ],
    )
    .await;

    let s = p.store.as_ref();
    let everything = ContactQuery {
        limit: 100,
        ..Default::default()
    };
    let searched = ContactQuery {
        search: Some("example".into()),
        limit: 100,
        ..Default::default()
    };
    let subscribed = ContactQuery {
        subscribed: Some(true),
        limit: 100,
        ..Default::default()
    };
    // A sanity check that A sees its own records, so the checks below mean something.
    assert_eq!(s.count_contacts(&a.id, &everything).await, Ok(2));

    assert_eq!(s.key_sets(&b.id).await, Ok(vec![]), "key sets leak");
    assert_eq!(s.domains(&b.id).await, Ok(vec![]), "domains leak");
    assert_eq!(
        s.contact(&b.id, &active.id).await,
        Ok(None),
        "contact by id leaks"
    );
    assert_eq!(
        s.contact_by_email(&b.id, active.email.as_str()).await,
        Ok(None),
        "contact by email leaks"
    );
    for query in [&everything, &searched, &subscribed] {
        let page = s.contacts(&b.id, query).await.expect("contacts failed");
        assert!(
            page.contacts.is_empty() && !page.has_more,
            "contact listing leaks: {query:?}"
        );
        assert_eq!(
            s.count_contacts(&b.id, query).await,
            Ok(0),
            "contact count leaks"
        );
    }
    assert_eq!(
        s.count_active_contacts(&b.id).await,
        Ok(0),
        "active count leaks"
    );
    assert_eq!(
        s.pending_contacts(&b.id, 100).await,
        Ok(vec![]),
        "pending contacts leak"
    );
    assert_eq!(s.template(&b.id, &tpl.id).await, Ok(None), "template leaks");
    let templates = s
        .templates(
            &b.id,
            &TemplateQuery {
                limit: 100,
                ..Default::default()
            },
        )
        .await
        .expect("templates failed");
    assert_eq!(templates, (vec![], 0), "template listing leaks");
    assert_eq!(s.email(&b.id, &mail.id).await, Ok(None), "email leaks");
    let by_contact = EventQuery {
        contact_id: Some(active.id.clone()),
        limit: 100,
        ..Default::default()
    };
    let by_name = EventQuery {
        name: Some("signup".into()),
        limit: 100,
        ..Default::default()
    };
    for query in [
        EventQuery {
            limit: 100,
            ..Default::default()
        },
        by_contact,
        by_name,
    ] {
        assert_eq!(
            s.events(&b.id, &query).await,
            Ok(vec![]),
            "events leak: {query:?}"
        );
    }
    assert_eq!(s.event_names(&b.id).await, Ok(vec![]), "event names leak");

    // Writes addressed to B do not touch A's records.
    commit(
        p.store.as_ref(),
        "deletes addressed to workspace B",
        vec![
            Write::DeleteContact {
                workspace_id: b.id.clone(),
                id: active.id.clone(),
            },
            Write::DeleteKeySet {
                workspace_id: b.id.clone(),
                id: keys.record.id.clone(),
            },
            Write::DeleteTemplate {
                workspace_id: b.id.clone(),
                id: tpl.id.clone(),
            },
        ],
    )
    .await;
    assert!(
        s.contact(&a.id, &active.id).await.ok().flatten().is_some(),
        "B deleted A's contact"
    );
    assert_eq!(
        s.key_sets(&a.id).await.map(|k| k.len()),
        Ok(1),
        "B deleted A's key set"
    );
    assert!(
        s.template(&a.id, &tpl.id).await.ok().flatten().is_some(),
        "B deleted A's template"
    );

    // The same email may be a contact of both workspaces.
    let mut twin = contact(&b.id, "twin", true, now);
    twin.email = active.email.clone();
    commit(
        p.store.as_ref(),
        "the same email in workspace B",
        vec![Write::InsertContact(twin.clone())],
    )
    .await;
    let found = s.contact_by_email(&b.id, active.email.as_str()).await;
    assert_eq!(found.ok().flatten().map(|c| c.id), Some(twin.id));
    let found = s.contact_by_email(&a.id, active.email.as_str()).await;
    assert_eq!(found.ok().flatten().map(|c| c.id), Some(active.id));
}
