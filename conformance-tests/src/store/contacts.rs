//! Contacts: uniqueness, optimistic versions, listing, counting, pending contacts.

use posthorn_core::model::ContactId;
use std::collections::{BTreeSet, HashSet};

use posthorn_core::model::{Contact, ContactStatus};
use posthorn_core::ports::{ChangeSet, ContactQuery, StoreError, Write};
use serde_json::{json, Map, Value};

use crate::fixtures::{
    commit, commit_conflicts, contact, insert_contact, must_read_contact, now_ms, object, secs,
    workspace,
};
use crate::StorePorts;

/// A contact reads back by id and by email exactly as inserted, with version 0.
pub async fn contact_insert_and_read(p: &StorePorts) {
    let ws = workspace(p, "contacts").await;
    let mut new = contact(&ws.id, "read", true, now_ms());
    new.data = object(json!({"plan": "pro", "age": 42, "tags": ["a", "b"]}));
    new.version = 7; // the store must ignore it and store 0
    commit(
        p.store.as_ref(),
        "insert",
        vec![Write::InsertContact(new.clone())],
    )
    .await;
    new.version = 0;

    let by_id = must_read_contact(p.store.as_ref(), &ws.id, &new.id).await;
    assert_eq!(
        by_id, new,
        "contact read by id differs from the one inserted"
    );
    let by_email = p
        .store
        .contact_by_email(&ws.id, new.email.as_str())
        .await
        .expect("contact_by_email failed");
    assert_eq!(by_email, Some(new.clone()), "contact read by email differs");

    let missing = p.store.contact(&ws.id, &crate::fixtures::fresh_id()).await;
    assert_eq!(missing, Ok(None), "an unknown contact id must read as None");
    let missing = p
        .store
        .contact_by_email(&ws.id, "nobody-x@example.com")
        .await;
    assert_eq!(missing, Ok(None), "an unknown email must read as None");
}

/// Inserting a contact whose (workspace, email) is taken conflicts and applies nothing else
/// of the change set.
pub async fn contact_insert_of_taken_email_conflicts(p: &StorePorts) {
    let ws = workspace(p, "taken").await;
    let now = now_ms();
    let first = insert_contact(p, &ws.id, "taken", true, now).await;

    let other = contact(&ws.id, "other", true, now);
    let mut duplicate = contact(&ws.id, "dup", false, now);
    duplicate.email = first.email.clone();
    let event = crate::fixtures::event(&ws.id, "signup", Some(&other.id), now);
    commit_conflicts(
        p.store.as_ref(),
        "inserting a contact with a taken email",
        vec![
            Write::InsertContact(other.clone()),
            Write::AppendEvent(event),
            Write::InsertContact(duplicate.clone()),
        ],
    )
    .await;

    let stored = must_read_contact(p.store.as_ref(), &ws.id, &first.id).await;
    assert_eq!(stored, first, "the existing contact must be untouched");
    assert_eq!(
        p.store.contact(&ws.id, &other.id).await,
        Ok(None),
        "a contact inserted earlier in the conflicting change set must not exist"
    );
    assert_eq!(
        p.store.contact(&ws.id, &duplicate.id).await,
        Ok(None),
        "the conflicting contact must not exist"
    );
    let events = p
        .store
        .events(
            &ws.id,
            &posthorn_core::ports::EventQuery {
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .expect("events failed");
    assert!(
        events.is_empty(),
        "an event of the conflicting change set was stored"
    );
    let count = p
        .store
        .count_contacts(&ws.id, &ContactQuery::default())
        .await;
    assert_eq!(count, Ok(1), "exactly one contact must exist");
}

/// Updating with a version that moved on conflicts and changes nothing.
pub async fn contact_update_with_stale_version_conflicts(p: &StorePorts) {
    let ws = workspace(p, "stale").await;
    let original = insert_contact(p, &ws.id, "stale", true, now_ms()).await;

    let mut first = original.clone();
    first.data = object(json!({"winner": "first"}));
    commit(
        p.store.as_ref(),
        "first update",
        vec![Write::UpdateContact(first.clone())],
    )
    .await;

    let mut second = original.clone();
    second.data = object(json!({"winner": "second"}));
    commit_conflicts(
        p.store.as_ref(),
        "updating with a stale version",
        vec![Write::UpdateContact(second)],
    )
    .await;

    let stored = must_read_contact(p.store.as_ref(), &ws.id, &original.id).await;
    assert_eq!(
        stored.data, first.data,
        "a stale update must not be applied"
    );
    assert_eq!(
        stored.version, 1,
        "a stale update must not bump the version"
    );
}

/// Every stored update bumps the version by one and stores the new fields.
pub async fn contact_update_bumps_version(p: &StorePorts) {
    let ws = workspace(p, "version").await;
    let now = now_ms();
    let mut current = insert_contact(p, &ws.id, "version", true, now).await;
    for round in 1..=3u64 {
        let mut next = current.clone();
        next.subscribed = round % 2 == 0;
        next.data.insert(format!("k{round}"), Value::from(round));
        next.updated_at = secs(now, round as i64);
        commit(
            p.store.as_ref(),
            "update",
            vec![Write::UpdateContact(next.clone())],
        )
        .await;
        let stored = must_read_contact(p.store.as_ref(), &ws.id, &current.id).await;
        assert_eq!(stored.version, round, "version after {round} updates");
        next.version = round;
        assert_eq!(stored, next, "stored contact after update {round}");
        current = stored;
    }
}

/// Updating a contact that does not exist conflicts.
pub async fn contact_update_of_missing_contact_conflicts(p: &StorePorts) {
    let ws = workspace(p, "missing").await;
    let ghost = contact(&ws.id, "ghost", true, now_ms());
    commit_conflicts(
        p.store.as_ref(),
        "updating a contact that was never inserted",
        vec![Write::UpdateContact(ghost.clone())],
    )
    .await;
    assert_eq!(p.store.contact(&ws.id, &ghost.id).await, Ok(None));
}

/// Changing a contact's email to one another contact has conflicts.
pub async fn contact_update_to_taken_email_conflicts(p: &StorePorts) {
    let ws = workspace(p, "rename").await;
    let now = now_ms();
    let a = insert_contact(p, &ws.id, "a", true, now).await;
    let b = insert_contact(p, &ws.id, "b", true, now).await;
    let mut renamed = b.clone();
    renamed.email = a.email.clone();
    commit_conflicts(
        p.store.as_ref(),
        "changing an email to a taken one",
        vec![Write::UpdateContact(renamed)],
    )
    .await;
    assert_eq!(must_read_contact(p.store.as_ref(), &ws.id, &b.id).await, b);

    // A free address is fine, and the old one is released.
    let mut moved = b.clone();
    moved.email = crate::fixtures::email("moved");
    commit(
        p.store.as_ref(),
        "rename",
        vec![Write::UpdateContact(moved.clone())],
    )
    .await;
    let by_new = p.store.contact_by_email(&ws.id, moved.email.as_str()).await;
    assert_eq!(by_new.ok().flatten().map(|c| c.id), Some(b.id.clone()));
    let by_old = p.store.contact_by_email(&ws.id, b.email.as_str()).await;
    assert_eq!(
        by_old,
        Ok(None),
        "the old email must no longer find the contact"
    );
}

/// 20 tasks upsert the same email concurrently (read, insert or update, retry on
/// conflict): exactly one contact remains and it holds every task's data key.
pub async fn contact_concurrent_upserts_keep_one(p: &StorePorts) {
    const TASKS: usize = 20;
    let ws = workspace(p, "upsert").await;
    let address = crate::fixtures::email("upsert");
    let now = now_ms();
    let mut tasks = tokio::task::JoinSet::new();
    for task in 0..TASKS {
        let store = p.store.clone();
        let ws_id = ws.id.clone();
        let address = address.clone();
        tasks.spawn(async move {
            let key = format!("task{task}");
            for _attempt in 0..1000 {
                let existing = store
                    .contact_by_email(&ws_id, address.as_str())
                    .await
                    .expect("contact_by_email failed");
                // Widen the window between read and write so that races really happen.
                tokio::task::yield_now().await;
                let write = match existing {
                    None => {
                        let mut data = Map::new();
                        data.insert(key.clone(), Value::from(task));
                        let new = Contact::new(
                            crate::fixtures::ids(),
                            &ws_id,
                            address.clone(),
                            true,
                            data,
                            false,
                            now,
                        );
                        Write::InsertContact(new)
                    }
                    Some(mut current) => {
                        current.data.insert(key.clone(), Value::from(task));
                        Write::UpdateContact(current)
                    }
                };
                match store
                    .commit(ChangeSet {
                        writes: vec![write],
                    })
                    .await
                {
                    Ok(()) => return,
                    Err(StoreError::Conflict(_)) => tokio::task::yield_now().await,
                    Err(e) => panic!("upsert commit failed: {e}"),
                }
            }
            panic!("task {task} could not upsert in 1000 attempts");
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("an upsert task panicked");
    }

    let query = ContactQuery {
        search: Some(address.to_string()),
        limit: 10,
        ..Default::default()
    };
    let page = p
        .store
        .contacts(&ws.id, &query)
        .await
        .expect("contacts failed");
    assert_eq!(
        page.contacts.len(),
        1,
        "exactly one contact must hold the email"
    );
    let stored = &page.contacts[0];
    for task in 0..TASKS {
        assert_eq!(
            stored.data.get(&format!("task{task}")),
            Some(&Value::from(task)),
            "data key of task {task} was lost: {:?}",
            stored.data
        );
    }
    assert_eq!(
        stored.version,
        (TASKS - 1) as u64,
        "one insert and {} updates must leave version {}",
        TASKS - 1,
        TASKS - 1
    );
}

/// Deleting removes a contact from every read and frees its email; deleting again is a
/// no-op.
pub async fn contact_delete(p: &StorePorts) {
    let ws = workspace(p, "delete").await;
    let now = now_ms();
    let keep = insert_contact(p, &ws.id, "keep", true, now).await;
    let gone = insert_contact(p, &ws.id, "gone", true, now).await;
    let delete = || Write::DeleteContact {
        workspace_id: ws.id.clone(),
        id: gone.id.clone(),
    };
    commit(p.store.as_ref(), "delete", vec![delete()]).await;
    assert_eq!(p.store.contact(&ws.id, &gone.id).await, Ok(None));
    assert_eq!(
        p.store.contact_by_email(&ws.id, gone.email.as_str()).await,
        Ok(None)
    );
    assert_eq!(
        p.store
            .count_contacts(&ws.id, &ContactQuery::default())
            .await,
        Ok(1)
    );
    assert_eq!(p.store.count_active_contacts(&ws.id).await, Ok(1));
    let page = p
        .store
        .contacts(
            &ws.id,
            &ContactQuery {
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .expect("contacts failed");
    assert_eq!(
        page.contacts,
        vec![keep],
        "only the kept contact must be listed"
    );

    commit(
        p.store.as_ref(),
        "deleting an absent contact is a no-op",
        vec![delete()],
    )
    .await;

    let mut again = contact(&ws.id, "again", true, now);
    again.email = gone.email.clone();
    commit(
        p.store.as_ref(),
        "re-inserting a deleted contact's email",
        vec![Write::InsertContact(again)],
    )
    .await;
}

fn ids(contacts: &[Contact]) -> Vec<ContactId> {
    contacts.iter().map(|c| c.id.clone()).collect()
}

/// Listing is newest (greatest id) first; `before_id` pages without overlap and `has_more`
/// says whether another page exists.
pub async fn contacts_listed_newest_first_by_keyset(p: &StorePorts) {
    let ws = workspace(p, "paging").await;
    let now = now_ms();
    let contacts: Vec<Contact> = (0..25)
        .map(|i| contact(&ws.id, "page", i % 2 == 0, now))
        .collect();
    commit(
        p.store.as_ref(),
        "inserting 25 contacts",
        contacts.iter().cloned().map(Write::InsertContact).collect(),
    )
    .await;
    let mut expected = ids(&contacts);
    expected.sort_by(|a, b| b.cmp(a));

    let mut seen = Vec::new();
    let mut before_id = None;
    let mut pages = Vec::new();
    loop {
        let query = ContactQuery {
            before_id: before_id.clone(),
            limit: 10,
            ..Default::default()
        };
        let page = p
            .store
            .contacts(&ws.id, &query)
            .await
            .expect("contacts failed");
        pages.push((page.contacts.len(), page.has_more));
        seen.extend(ids(&page.contacts));
        before_id = page.contacts.last().map(|c| c.id.clone());
        if !page.has_more {
            break;
        }
        assert!(pages.len() < 10, "paging does not end");
    }
    assert_eq!(
        pages,
        vec![(10, true), (10, true), (5, false)],
        "page sizes and has_more"
    );
    assert_eq!(
        seen, expected,
        "pages must list every contact once, greatest id first"
    );

    let exact = ContactQuery {
        limit: 25,
        ..Default::default()
    };
    let page = p
        .store
        .contacts(&ws.id, &exact)
        .await
        .expect("contacts failed");
    assert!(
        !page.has_more,
        "has_more must be false when the page holds the last contact"
    );
    assert_eq!(page.contacts.len(), 25);
}

/// `subscribed` and `search` (case-insensitive substring of the email) filter listings,
/// and `count_contacts` counts with the same filters.
pub async fn contacts_filtered_and_counted(p: &StorePorts) {
    let ws = workspace(p, "filters").await;
    let now = now_ms();
    let mut all = Vec::new();
    for i in 0..12 {
        let tag = if i % 3 == 0 { "alpha" } else { "beta" };
        all.push(insert_contact(p, &ws.id, tag, i % 2 == 0, now).await);
    }
    let expect = |subscribed: Option<bool>, search: Option<&str>| {
        let mut ids: Vec<ContactId> = all
            .iter()
            .filter(|c| subscribed.is_none_or(|s| c.subscribed == s))
            .filter(|c| search.is_none_or(|s| c.email.as_str().contains(&s.to_lowercase())))
            .map(|c| c.id.clone())
            .collect();
        ids.sort_by(|a, b| b.cmp(a));
        ids
    };
    let cases: [(Option<bool>, Option<&str>); 7] = [
        (None, None),
        (Some(true), None),
        (Some(false), None),
        (None, Some("ALPHA")),
        (Some(true), Some("alpha-")),
        (Some(false), Some("Beta")),
        (None, Some("no-such-substring")),
    ];
    for (subscribed, search) in cases {
        let query = ContactQuery {
            subscribed,
            search: search.map(str::to_string),
            before_id: None,
            limit: 100,
        };
        let page = p
            .store
            .contacts(&ws.id, &query)
            .await
            .expect("contacts failed");
        assert_eq!(
            ids(&page.contacts),
            expect(subscribed, search),
            "listing with subscribed={subscribed:?} search={search:?}"
        );
        assert!(!page.has_more);
        let count = p.store.count_contacts(&ws.id, &query).await;
        assert_eq!(
            count,
            Ok(expect(subscribed, search).len() as u64),
            "count with subscribed={subscribed:?} search={search:?}"
        );
        // Position and limit are ignored by the count.
        let paged = ContactQuery {
            before_id: Some(all[5].id.clone()),
            limit: 1,
            ..query.clone()
        };
        assert_eq!(
            p.store.count_contacts(&ws.id, &paged).await,
            count,
            "count_contacts must ignore before_id and limit"
        );
    }

    // Filters combine with the keyset position and the limit.
    let query = ContactQuery {
        subscribed: Some(true),
        search: Some("beta".into()),
        before_id: None,
        limit: 2,
    };
    let page = p
        .store
        .contacts(&ws.id, &query)
        .await
        .expect("contacts failed");
    let expected = expect(Some(true), Some("beta"));
    assert_eq!(ids(&page.contacts), expected[..2].to_vec());
    assert!(page.has_more);
    let next = ContactQuery {
        before_id: page.contacts.last().map(|c| c.id.clone()),
        limit: 100,
        ..query
    };
    let page = p
        .store
        .contacts(&ws.id, &next)
        .await
        .expect("contacts failed");
    assert_eq!(ids(&page.contacts), expected[2..].to_vec());
}

/// The subscription counts follow a contact that unsubscribes, subscribes again, changes
/// status and is deleted (stores that keep counts must move them, not only add).
pub async fn subscription_counts_follow_changes(p: &StorePorts) {
    let ws = workspace(p, "subscription-counts").await;
    let now = now_ms();
    let mut all = Vec::new();
    for i in 0..6 {
        all.push(insert_contact(p, &ws.id, "sub", i % 2 == 0, now).await);
    }
    let counts = || async {
        let mut out = Vec::new();
        for subscribed in [None, Some(true), Some(false)] {
            let query = ContactQuery {
                subscribed,
                ..ContactQuery::default()
            };
            out.push(p.store.count_contacts(&ws.id, &query).await);
        }
        out
    };
    assert_eq!(counts().await, vec![Ok(6), Ok(3), Ok(3)]);

    let mut unsubscribed = all[0].clone();
    unsubscribed.subscribed = false;
    commit(
        p.store.as_ref(),
        "unsubscribe",
        vec![Write::UpdateContact(unsubscribed)],
    )
    .await;
    assert_eq!(
        counts().await,
        vec![Ok(6), Ok(2), Ok(4)],
        "after an unsubscribe"
    );

    let mut back = must_read_contact(p.store.as_ref(), &ws.id, &all[1].id).await;
    back.subscribed = true;
    back.status = ContactStatus::Pending;
    commit(
        p.store.as_ref(),
        "subscribe and change status",
        vec![Write::UpdateContact(back)],
    )
    .await;
    assert_eq!(
        counts().await,
        vec![Ok(6), Ok(3), Ok(3)],
        "after a subscribe"
    );

    commit(
        p.store.as_ref(),
        "delete",
        vec![Write::DeleteContact {
            workspace_id: ws.id.clone(),
            id: all[2].id.clone(),
        }],
    )
    .await;
    assert_eq!(
        counts().await,
        vec![Ok(5), Ok(2), Ok(3)],
        "after a deletion"
    );
}

/// Walking the pages while other tasks insert contacts lists every contact that existed at
/// the start exactly once and never repeats one.
pub async fn contacts_pagination_stable_under_inserts(p: &StorePorts) {
    let ws = workspace(p, "stable").await;
    let now = now_ms();
    let initial: Vec<Contact> = (0..60)
        .map(|_| contact(&ws.id, "stable", true, now))
        .collect();
    commit(
        p.store.as_ref(),
        "inserting 60 contacts",
        initial.iter().cloned().map(Write::InsertContact).collect(),
    )
    .await;

    let writer = {
        let store = p.store.clone();
        let ws_id = ws.id.clone();
        tokio::spawn(async move {
            for _ in 0..40 {
                let new = contact(&ws_id, "late", true, now);
                store
                    .commit(ChangeSet {
                        writes: vec![Write::InsertContact(new)],
                    })
                    .await
                    .expect("concurrent insert failed");
                tokio::task::yield_now().await;
            }
        })
    };

    let mut seen: Vec<ContactId> = Vec::new();
    let mut before_id = None;
    for page_number in 0.. {
        assert!(page_number < 100, "paging does not end");
        let query = ContactQuery {
            before_id: before_id.clone(),
            limit: 7,
            ..Default::default()
        };
        let page = p
            .store
            .contacts(&ws.id, &query)
            .await
            .expect("contacts failed");
        seen.extend(ids(&page.contacts));
        before_id = page.contacts.last().map(|c| c.id.clone());
        // Interleave with the writer on purpose.
        let extra = contact(&ws.id, "between", true, now);
        p.store
            .commit(ChangeSet {
                writes: vec![Write::InsertContact(extra)],
            })
            .await
            .expect("insert between pages failed");
        if !page.has_more {
            break;
        }
    }
    writer.await.expect("writer task panicked");

    let mut unique = HashSet::new();
    for id in &seen {
        assert!(unique.insert(id.clone()), "contact {id} was listed twice");
    }
    for c in &initial {
        assert!(
            unique.contains(&c.id),
            "contact {} that existed at the start was skipped",
            c.id
        );
    }
    let mut sorted = seen.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(seen, sorted, "pages must stay in descending id order");
}

/// `pending_contacts` lists PENDING contacts oldest first up to the limit, and
/// `count_active_contacts` counts only ACTIVE ones.
pub async fn contacts_pending_oldest_first_and_active_count(p: &StorePorts) {
    let ws = workspace(p, "pending").await;
    let start = now_ms();
    let mut pending = Vec::new();
    for i in 0..6 {
        let at = secs(start, i);
        let new = Contact::new(
            crate::fixtures::ids(),
            &ws.id,
            crate::fixtures::email("p"),
            true,
            Map::new(),
            i % 2 == 1,
            at,
        );
        commit(
            p.store.as_ref(),
            "insert",
            vec![Write::InsertContact(new.clone())],
        )
        .await;
        if new.status == ContactStatus::Pending {
            assert!(new.expires_at.is_some());
            pending.push(new);
        }
    }
    assert_eq!(pending.len(), 3);
    assert_eq!(p.store.count_active_contacts(&ws.id).await, Ok(3));

    let two = p
        .store
        .pending_contacts(&ws.id, 2)
        .await
        .expect("pending_contacts failed");
    assert_eq!(
        ids(&two),
        ids(&pending[..2]),
        "pending contacts oldest first, limited"
    );
    let all = p
        .store
        .pending_contacts(&ws.id, 100)
        .await
        .expect("pending_contacts failed");
    assert_eq!(all, pending, "every pending contact, oldest first");

    // Promote the oldest.
    let mut promoted = pending[0].clone();
    promoted.status = ContactStatus::Active;
    promoted.expires_at = None;
    commit(
        p.store.as_ref(),
        "promote",
        vec![Write::UpdateContact(promoted)],
    )
    .await;
    assert_eq!(p.store.count_active_contacts(&ws.id).await, Ok(4));
    assert_eq!(
        p.store
            .count_contacts(&ws.id, &ContactQuery::default())
            .await,
        Ok(6),
        "a status change moves a contact between counts, it adds none"
    );
    let rest = p
        .store
        .pending_contacts(&ws.id, 100)
        .await
        .expect("pending_contacts failed");
    assert_eq!(ids(&rest), ids(&pending[1..]));

    // Deleting a pending contact removes it from the list.
    commit(
        p.store.as_ref(),
        "delete pending",
        vec![Write::DeleteContact {
            workspace_id: ws.id.clone(),
            id: pending[2].id.clone(),
        }],
    )
    .await;
    let rest = p
        .store
        .pending_contacts(&ws.id, 100)
        .await
        .expect("pending_contacts failed");
    assert_eq!(ids(&rest), vec![pending[1].id.clone()]);
    let total = p
        .store
        .count_contacts(&ws.id, &ContactQuery::default())
        .await;
    assert_eq!(total, Ok(5));
    let distinct: BTreeSet<ContactId> = ids(&all).into_iter().collect();
    assert_eq!(distinct.len(), 3);
}
