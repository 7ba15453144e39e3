//! Workspaces, key sets, domains, templates, email records and events.

use posthorn_core::model::ContactId;
use posthorn_core::model::WorkspaceId;
use posthorn_core::model::{
    hash_key, BounceType, EmailRecord, EmailStatus, KeyKind, NewKeySet, TemplateType, Workspace,
};
use posthorn_core::ports::{EventQuery, TemplateQuery, Write};

use crate::fixtures::{
    commit, commit_conflicts, domain, email_record, event, insert_contact, now_ms, secs, template,
    unique, workspace, workspace_at,
};
use crate::StorePorts;

/// Workspaces read back by id, list oldest first, and `PutWorkspace` replaces.
pub async fn workspaces_put_get_list(p: &StorePorts) {
    let now = now_ms();
    let b = workspace_at(p, "second", secs(now, 10)).await;
    let a = workspace_at(p, "first", now).await;
    assert_eq!(p.store.workspace(&a.id).await, Ok(Some(a.clone())));
    assert_eq!(
        p.store.workspace(&crate::fixtures::fresh_id()).await,
        Ok(None)
    );

    let listed: Vec<WorkspaceId> = p
        .store
        .workspaces()
        .await
        .expect("workspaces failed")
        .into_iter()
        .filter(|w| w.id == a.id || w.id == b.id)
        .map(|w| w.id)
        .collect();
    assert_eq!(
        listed,
        vec![a.id.clone(), b.id.clone()],
        "workspaces oldest first"
    );

    let mut changed = a.clone();
    changed.name = format!("renamed-{}", unique());
    changed.disabled = true;
    changed.active_contact_limit = Some(1000);
    changed.rate_limit_per_minute = 10;
    changed.send_rate_per_second = 2.5;
    changed.track_opens = false;
    changed.track_clicks = false;
    changed.updated_at = secs(now, 20);
    commit(
        p.store.as_ref(),
        "replace",
        vec![Write::PutWorkspace(changed.clone())],
    )
    .await;
    assert_eq!(
        p.store.workspace(&a.id).await,
        Ok(Some(changed)),
        "PutWorkspace must replace"
    );
    let count = p.store.workspaces().await.expect("workspaces failed").len();
    assert!(count >= 2, "replacing must not add a workspace");
    let again: Vec<Workspace> = p.store.workspaces().await.expect("workspaces failed");
    assert_eq!(again.iter().filter(|w| w.id == a.id).count(), 1);
}

/// Both keys of a set are found by hash with the right kind; deleting the set removes both.
pub async fn key_sets_by_hash_and_delete(p: &StorePorts) {
    let ws = workspace(p, "keys").await;
    let now = now_ms();
    let first = NewKeySet::generate(
        crate::fixtures::ids(),
        &ws.id,
        Some("main".into()),
        vec!["example.com".into()],
        now,
    );
    let second = NewKeySet::generate(crate::fixtures::ids(), &ws.id, None, vec![], secs(now, 5));
    commit(
        p.store.as_ref(),
        "key sets",
        vec![
            Write::PutKeySet(second.record.clone()),
            Write::PutKeySet(first.record.clone()),
        ],
    )
    .await;

    let public = p
        .store
        .key_by_hash(&hash_key(&first.public_key))
        .await
        .expect("key_by_hash");
    let public = public.expect("the public key must be found by its hash");
    assert_eq!(public.kind, KeyKind::Public);
    assert_eq!(public.key_set, first.record);
    let secret = p
        .store
        .key_by_hash(&first.record.secret_key_hash)
        .await
        .expect("key_by_hash");
    let secret = secret.expect("the secret key must be found by its hash");
    assert_eq!(secret.kind, KeyKind::Secret);
    assert_eq!(secret.key_set, first.record);
    assert_eq!(p.store.key_by_hash(&hash_key("sk_unknown")).await, Ok(None));

    let sets = p.store.key_sets(&ws.id).await.expect("key_sets failed");
    assert_eq!(
        sets,
        vec![first.record.clone(), second.record.clone()],
        "oldest first"
    );

    let delete = Write::DeleteKeySet {
        workspace_id: ws.id.clone(),
        id: first.record.id.clone(),
    };
    commit(p.store.as_ref(), "delete key set", vec![delete.clone()]).await;
    assert_eq!(
        p.store.key_by_hash(&first.record.public_key_hash).await,
        Ok(None)
    );
    assert_eq!(
        p.store.key_by_hash(&first.record.secret_key_hash).await,
        Ok(None)
    );
    assert_eq!(
        p.store.key_sets(&ws.id).await,
        Ok(vec![second.record.clone()])
    );
    let still = p
        .store
        .key_by_hash(&second.record.secret_key_hash)
        .await
        .expect("key_by_hash");
    assert!(still.is_some(), "deleting one set removed another");
    commit(
        p.store.as_ref(),
        "deleting an absent key set is a no-op",
        vec![delete],
    )
    .await;
}

/// Domain names are unique per workspace, not across workspaces; updates replace.
pub async fn domains_insert_update_and_uniqueness(p: &StorePorts) {
    let ws = workspace(p, "domains").await;
    let other = workspace(p, "domains-other").await;
    let now = now_ms();
    let name = format!("{}.example.org", unique());
    let first = domain(&ws.id, &name, now);
    let second = domain(&ws.id, &format!("{}.example.org", unique()), secs(now, 1));
    commit(
        p.store.as_ref(),
        "domains",
        vec![
            Write::InsertDomain(first.clone()),
            Write::InsertDomain(second.clone()),
        ],
    )
    .await;
    assert_eq!(
        p.store.domains(&ws.id).await,
        Ok(vec![first.clone(), second.clone()])
    );

    commit_conflicts(
        p.store.as_ref(),
        "inserting a domain name the workspace already has",
        vec![Write::InsertDomain(domain(&ws.id, &name, now))],
    )
    .await;
    let elsewhere = domain(&other.id, &name, now);
    commit(
        p.store.as_ref(),
        "the same name in another workspace",
        vec![Write::InsertDomain(elsewhere.clone())],
    )
    .await;
    assert_eq!(p.store.domains(&other.id).await, Ok(vec![elsewhere]));

    let mut verified = first.clone();
    verified.verified = true;
    verified.inbound_enabled = true;
    verified.updated_at = secs(now, 2);
    commit(
        p.store.as_ref(),
        "update",
        vec![Write::UpdateDomain(verified.clone())],
    )
    .await;
    assert_eq!(p.store.domains(&ws.id).await, Ok(vec![verified, second]));

    commit_conflicts(
        p.store.as_ref(),
        "updating a domain that does not exist",
        vec![Write::UpdateDomain(domain(
            &ws.id,
            "ghost.example.org",
            now,
        ))],
    )
    .await;
}

/// Templates: get, replace, delete, and listing newest first with type and search
/// filters, offset, limit and the matching total.
pub async fn templates_put_get_list(p: &StorePorts) {
    let ws = workspace(p, "templates").await;
    let now = now_ms();
    use TemplateType::{Marketing, Transactional};
    let specs = [
        ("Welcome", "Welcome aboard", Transactional),
        ("Newsletter May", "News for May", Marketing),
        ("Receipt", "Your receipt", Transactional),
        ("Newsletter June", "News for June", Marketing),
        ("Promo", "Big NEWS inside", Marketing),
    ];
    let templates: Vec<_> = specs
        .iter()
        .enumerate()
        .map(|(i, (name, subject, ty))| template(&ws.id, name, subject, *ty, secs(now, i as i64)))
        .collect();
    commit(
        p.store.as_ref(),
        "templates",
        templates.iter().cloned().map(Write::PutTemplate).collect(),
    )
    .await;
    assert_eq!(
        p.store.template(&ws.id, &templates[0].id).await,
        Ok(Some(templates[0].clone()))
    );
    assert_eq!(
        p.store.template(&ws.id, &crate::fixtures::fresh_id()).await,
        Ok(None)
    );

    let list = |template_type, search: Option<&str>, offset, limit| TemplateQuery {
        template_type,
        search: search.map(str::to_string),
        offset,
        limit,
    };
    let names = |found: &[posthorn_core::model::Template]| {
        found.iter().map(|t| t.name.clone()).collect::<Vec<_>>()
    };
    let cases = [
        (
            list(None, None, 0, 10),
            vec![
                "Promo",
                "Newsletter June",
                "Receipt",
                "Newsletter May",
                "Welcome",
            ],
            5,
        ),
        (
            list(None, None, 1, 2),
            vec!["Newsletter June", "Receipt"],
            5,
        ),
        (
            list(Some(Marketing), None, 0, 10),
            vec!["Promo", "Newsletter June", "Newsletter May"],
            3,
        ),
        (list(Some(Transactional), None, 0, 1), vec!["Receipt"], 2),
        (
            list(None, Some("news"), 0, 10),
            vec!["Promo", "Newsletter June", "Newsletter May"],
            3,
        ),
        (list(None, Some("RECEIPT"), 0, 10), vec!["Receipt"], 1),
        (list(Some(Transactional), Some("news"), 0, 10), vec![], 0),
        (list(None, None, 10, 10), vec![], 5),
    ];
    for (query, expected, total) in cases {
        let (found, count) = p
            .store
            .templates(&ws.id, &query)
            .await
            .expect("templates failed");
        assert_eq!(names(&found), expected, "templates for {query:?}");
        assert_eq!(count, total, "total for {query:?}");
    }

    let mut replaced = templates[2].clone();
    replaced.subject = "Receipt v2".into();
    replaced.updated_at = secs(now, 30);
    commit(
        p.store.as_ref(),
        "replace",
        vec![Write::PutTemplate(replaced.clone())],
    )
    .await;
    assert_eq!(
        p.store.template(&ws.id, &replaced.id).await,
        Ok(Some(replaced.clone()))
    );
    let delete = Write::DeleteTemplate {
        workspace_id: ws.id.clone(),
        id: replaced.id.clone(),
    };
    commit(p.store.as_ref(), "delete", vec![delete.clone()]).await;
    assert_eq!(p.store.template(&ws.id, &replaced.id).await, Ok(None));
    let (_, count) = p
        .store
        .templates(&ws.id, &list(None, None, 0, 10))
        .await
        .expect("templates");
    assert_eq!(count, 4);
    commit(
        p.store.as_ref(),
        "deleting an absent template is a no-op",
        vec![delete],
    )
    .await;
}

/// Email records: insert, get, update; a duplicate insert or an update of a missing record
/// conflicts.
pub async fn emails_insert_update_get(p: &StorePorts) {
    let ws = workspace(p, "emails").await;
    let now = now_ms();
    let contact = insert_contact(p, &ws.id, "mail", true, now).await;
    let mut mail = email_record(&contact, now);
    mail.attachments = vec![posthorn_core::ports::Attachment {
        filename: "a.txt".into(),
        content_type: "text/plain".into(),
        content: b"hello".to_vec(),
        content_id: None,
        inline: false,
    }];
    commit(
        p.store.as_ref(),
        "insert email",
        vec![Write::InsertEmail(mail.clone())],
    )
    .await;
    assert_eq!(
        p.store.email(&ws.id, &mail.id).await,
        Ok(Some(mail.clone()))
    );
    assert_eq!(
        p.store.email(&ws.id, &crate::fixtures::fresh_id()).await,
        Ok(None)
    );

    commit_conflicts(
        p.store.as_ref(),
        "inserting an email id twice",
        vec![Write::InsertEmail(mail.clone())],
    )
    .await;

    let mut sent = mail.clone();
    sent.status = EmailStatus::Sent;
    sent.provider_message_id = Some("provider-1".into());
    sent.sent_at = Some(secs(now, 1));
    sent.updated_at = secs(now, 1);
    commit(
        p.store.as_ref(),
        "update email",
        vec![Write::UpdateEmail(sent.clone())],
    )
    .await;
    assert_eq!(p.store.email(&ws.id, &mail.id).await, Ok(Some(sent)));

    let ghost = email_record(&contact, now);
    commit_conflicts(
        p.store.as_ref(),
        "updating an email that does not exist",
        vec![Write::UpdateEmail(ghost.clone())],
    )
    .await;
    assert_eq!(p.store.email(&ws.id, &ghost.id).await, Ok(None));
}

/// `UpdateEmail` writes an email's state only: what it was accepted with (recipient,
/// addresses, subject, bodies, headers, attachments, template, campaign, origin,
/// Message-ID, creation time) stays as inserted, alone and two in one change set.
pub async fn email_updates_write_the_state_only(p: &StorePorts) {
    let ws = workspace(p, "email-state").await;
    let now = now_ms();
    let contact = insert_contact(p, &ws.id, "state", true, now).await;
    let other = insert_contact(p, &ws.id, "state-other", true, now).await;
    let mut first = email_record(&contact, now);
    first.attachments = vec![posthorn_core::ports::Attachment {
        filename: "invoice.pdf".into(),
        content_type: "application/pdf".into(),
        content: vec![7; 2048],
        content_id: None,
        inline: false,
    }];
    let second = email_record(&contact, now);
    commit(
        p.store.as_ref(),
        "insert two emails",
        vec![
            Write::InsertEmail(first.clone()),
            Write::InsertEmail(second.clone()),
        ],
    )
    .await;

    // A new state, sent with changed content that must not be stored.
    let update = |stored: &EmailRecord, status: EmailStatus, at: i64| {
        let mut e = stored.clone();
        e.status = status;
        e.provider_message_id = Some(format!("provider-{at}"));
        e.error = Some(format!("error {at}"));
        e.sent_at = Some(secs(now, at));
        e.updated_at = secs(now, at + 1);
        e.lifecycle.delivered_at = Some(secs(now, at + 2));
        e.lifecycle.opened_at = Some(secs(now, at + 3));
        e.lifecycle.last_opened_at = Some(secs(now, at + 4));
        e.lifecycle.opens = 3;
        e.lifecycle.clicks = 1;
        e.lifecycle.bounce_type = Some(BounceType::Transient);
        e.lifecycle.bounce_detail = Some("mailbox full".into());
        e.contact_id = other.id.clone();
        e.to = posthorn_core::ports::Mailbox {
            name: Some("Other".into()),
            email: other.email.as_str().to_owned(),
        };
        e.subject = "rewritten".into();
        e.html = "<p>rewritten</p>".into();
        e.text = Some("rewritten".into());
        e.headers = vec![("X-Rewritten".into(), "yes".into())];
        e.attachments.clear();
        e.message_id = format!("<rewritten-{at}@example.com>");
        e.created_at = secs(now, at + 5);
        e
    };
    let expect = |stored: &EmailRecord, update: &EmailRecord| {
        let mut e = stored.clone();
        e.take_state(update.clone());
        e
    };

    let (first_sent, second_sent) = (
        update(&first, EmailStatus::Sent, 10),
        update(&second, EmailStatus::Opened, 20),
    );
    commit(
        p.store.as_ref(),
        "two updates in one change set",
        vec![
            Write::UpdateEmail(first_sent.clone()),
            Write::UpdateEmail(second_sent.clone()),
        ],
    )
    .await;
    let first_now = expect(&first, &first_sent);
    assert_ne!(first_now, first, "the state changed");
    assert_eq!(
        p.store.email(&ws.id, &first.id).await,
        Ok(Some(first_now.clone()))
    );
    assert_eq!(
        p.store.email(&ws.id, &second.id).await,
        Ok(Some(expect(&second, &second_sent)))
    );

    let first_bounced = update(&first_now, EmailStatus::Bounced, 30);
    commit(
        p.store.as_ref(),
        "one update",
        vec![Write::UpdateEmail(first_bounced.clone())],
    )
    .await;
    assert_eq!(
        p.store.email(&ws.id, &first.id).await,
        Ok(Some(expect(&first, &first_bounced)))
    );
}

/// `email_without_content` reads an email's state and envelope but not its bodies and
/// attachments, answers nothing for an unknown id or another workspace's email, and the
/// copy it answers, its state changed, can be written back without losing the content.
pub async fn emails_read_without_content(p: &StorePorts) {
    let ws = workspace(p, "no-content").await;
    let elsewhere = workspace(p, "no-content-elsewhere").await;
    let now = now_ms();
    let contact = insert_contact(p, &ws.id, "no-content", true, now).await;
    let mut mail = email_record(&contact, now);
    mail.text = Some("the text part".into());
    mail.headers = vec![("X-Invoice".into(), "42".into())];
    mail.attachments = vec![posthorn_core::ports::Attachment {
        filename: "invoice.pdf".into(),
        content_type: "application/pdf".into(),
        content: vec![7; 4096],
        content_id: None,
        inline: false,
    }];
    assert!(!mail.html.is_empty(), "the fixture has an HTML body");
    commit(
        p.store.as_ref(),
        "insert email",
        vec![Write::InsertEmail(mail.clone())],
    )
    .await;

    let light = p.store.email_without_content(&ws.id, &mail.id).await;
    assert_eq!(light, Ok(Some(mail.without_content())));
    let Ok(Some(mut light)) = light else {
        return;
    };
    assert!(light.html.is_empty() && light.text.is_none() && light.attachments.is_empty());
    assert_eq!(
        (&light.subject, &light.headers, &light.to, &light.message_id),
        (&mail.subject, &mail.headers, &mail.to, &mail.message_id),
        "the envelope is read"
    );
    assert_eq!(
        p.store
            .email_without_content(&ws.id, &crate::fixtures::fresh_id())
            .await,
        Ok(None)
    );
    assert_eq!(
        p.store.email_without_content(&elsewhere.id, &mail.id).await,
        Ok(None),
        "another workspace's email is not found"
    );

    light.status = EmailStatus::Opened;
    light.lifecycle.opens = 2;
    light.lifecycle.opened_at = Some(secs(now, 3));
    light.updated_at = secs(now, 3);
    commit(
        p.store.as_ref(),
        "write the light copy back",
        vec![Write::UpdateEmail(light.clone())],
    )
    .await;
    let mut expected = mail.clone();
    expected.take_state(light.clone());
    assert_eq!(
        p.store.email(&ws.id, &mail.id).await,
        Ok(Some(expected.clone()))
    );
    assert_eq!(
        p.store.email_without_content(&ws.id, &mail.id).await,
        Ok(Some(light.clone())),
        "the new state is read without content too"
    );

    let mut clicked = light;
    clicked.status = EmailStatus::Clicked;
    clicked.lifecycle.clicks = 1;
    commit_conflicts(
        p.store.as_ref(),
        "a state update, then an update of a missing email",
        vec![
            Write::UpdateEmail(clicked),
            Write::UpdateEmail(email_record(&contact, now)),
        ],
    )
    .await;
    assert_eq!(
        p.store.email(&ws.id, &mail.id).await,
        Ok(Some(expected)),
        "a failed change set leaves state and content as they were"
    );
}

/// Events list newest first, filtered by exact name and by contact, up to the limit.
pub async fn events_newest_first_with_filters(p: &StorePorts) {
    let ws = workspace(p, "events").await;
    let now = now_ms();
    let alice = insert_contact(p, &ws.id, "alice", true, now).await;
    let bob = insert_contact(p, &ws.id, "bob", true, now).await;
    let specs: [(&str, Option<&ContactId>); 6] = [
        ("signup", Some(&alice.id)),
        ("signup", Some(&bob.id)),
        ("purchase", Some(&alice.id)),
        ("email.sent", Some(&alice.id)),
        ("purchase", None),
        ("Signup", Some(&bob.id)),
    ];
    let events: Vec<_> = specs
        .iter()
        .enumerate()
        .map(|(i, (name, contact))| event(&ws.id, name, *contact, secs(now, i as i64)))
        .collect();
    commit(
        p.store.as_ref(),
        "events",
        events.iter().cloned().map(Write::AppendEvent).collect(),
    )
    .await;
    let pick = |indexes: &[usize]| {
        indexes
            .iter()
            .map(|i| events[*i].clone())
            .collect::<Vec<_>>()
    };
    let query = |name: Option<&str>, contact: Option<&ContactId>, limit| EventQuery {
        name: name.map(str::to_string),
        contact_id: contact.cloned(),
        limit,
    };
    let cases = [
        (query(None, None, 100), pick(&[5, 4, 3, 2, 1, 0])),
        (query(None, None, 2), pick(&[5, 4])),
        (query(Some("signup"), None, 100), pick(&[1, 0])),
        (query(Some("purchase"), None, 100), pick(&[4, 2])),
        (query(None, Some(&alice.id), 100), pick(&[3, 2, 0])),
        (query(None, Some(&alice.id), 1), pick(&[3])),
        (query(Some("signup"), Some(&bob.id), 100), pick(&[1])),
        (query(Some("nothing"), None, 100), vec![]),
    ];
    for (q, expected) in cases {
        let found = p.store.events(&ws.id, &q).await.expect("events failed");
        assert_eq!(found, expected, "events for {q:?}");
    }
}

/// `event_names` lists each stored name once, sorted by byte order (as Rust sorts
/// strings: upper case before lower case; a SQL backend needs a binary collation).
pub async fn event_names_distinct_sorted(p: &StorePorts) {
    let ws = workspace(p, "names").await;
    let now = now_ms();
    assert_eq!(p.store.event_names(&ws.id).await, Ok(vec![]));
    let names = [
        "zeta",
        "alpha",
        "email.sent",
        "alpha",
        "mid",
        "zeta",
        "Beta",
    ];
    commit(
        p.store.as_ref(),
        "events",
        names
            .iter()
            .enumerate()
            .map(|(i, n)| Write::AppendEvent(event(&ws.id, n, None, secs(now, i as i64))))
            .collect(),
    )
    .await;
    let expected: Vec<String> = ["Beta", "alpha", "email.sent", "mid", "zeta"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(p.store.event_names(&ws.id).await, Ok(expected));
}

/// Creating or revoking a key set and replacing a workspace move the access generation
/// as soon as the commit returns, so caches of authenticated keys are dropped at once.
pub async fn access_generation_moves_on_key_and_workspace_changes(p: &StorePorts) {
    let ws = workspace(p, "access").await;
    let now = now_ms();
    let set = NewKeySet::generate(crate::fixtures::ids(), &ws.id, None, vec![], now);
    let changes: [(&str, Write); 3] = [
        ("creating a key set", Write::PutKeySet(set.record.clone())),
        (
            "revoking a key set",
            Write::DeleteKeySet {
                workspace_id: ws.id.clone(),
                id: set.record.id.clone(),
            },
        ),
        ("replacing a workspace", {
            let mut disabled = ws.clone();
            disabled.disabled = true;
            Write::PutWorkspace(disabled)
        }),
    ];
    for (what, write) in changes {
        let before = p.store.access_generation();
        commit(p.store.as_ref(), what, vec![write]).await;
        assert_ne!(
            p.store.access_generation(),
            before,
            "{what} must move the access generation"
        );
    }
}
