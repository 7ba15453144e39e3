//! `Write::GuardActiveLimit`: a commit that would leave a workspace with more ACTIVE
//! contacts than the limit it carries is refused whole, also when several race for the
//! last places.

use posthorn_core::model::{Contact, ContactStatus, WorkspaceId};
use posthorn_core::ports::{ChangeSet, StoreError, Write};

use crate::fixtures::{commit, commit_conflicts, contact, insert_contact, now_ms, workspace};
use crate::StorePorts;

fn guard(ws: &WorkspaceId, limit: u64) -> Write {
    Write::GuardActiveLimit {
        workspace_id: ws.clone(),
        limit,
    }
}

/// A new contact of `ws` (not stored), ACTIVE or PENDING.
fn new_contact(ws: &WorkspaceId, status: ContactStatus) -> Contact {
    let mut c = contact(ws, "limit", true, now_ms());
    if status == ContactStatus::Pending {
        c.status = status;
        c.expires_at = Some(c.created_at + chrono::Duration::days(30));
    }
    c
}

async fn active(p: &StorePorts, ws: &WorkspaceId) -> u64 {
    p.store
        .count_active_contacts(ws)
        .await
        .expect("count_active_contacts failed")
}

/// The guard counts the workspace's ACTIVE contacts once the change set's writes are
/// applied, wherever it stands: a commit that fits goes through, one that would pass the
/// limit is refused whole (nothing of it stored), a PENDING contact and another workspace's
/// contacts take no place, and a promotion counts like a new contact. A workspace already
/// over the limit refuses every commit that carries it.
pub async fn active_limit_guard_refuses_commits_over_the_limit(p: &StorePorts) {
    let s = p.store.as_ref();
    let ws = workspace(p, "active-limit").await;
    let other = workspace(p, "active-limit-other").await;
    for _ in 0..2 {
        insert_contact(p, &ws.id, "limit", true, now_ms()).await;
    }

    let fits = new_contact(&ws.id, ContactStatus::Active);
    commit(
        s,
        "the third ACTIVE contact under a limit of 3",
        vec![Write::InsertContact(fits.clone()), guard(&ws.id, 3)],
    )
    .await;
    assert_eq!(active(p, &ws.id).await, 3);

    let over = new_contact(&ws.id, ContactStatus::Active);
    commit_conflicts(
        s,
        "a fourth ACTIVE contact under a limit of 3",
        vec![Write::InsertContact(over.clone()), guard(&ws.id, 3)],
    )
    .await;
    assert_eq!(
        s.contact(&ws.id, &over.id).await,
        Ok(None),
        "nothing stored"
    );
    assert_eq!(active(p, &ws.id).await, 3);

    let pending = new_contact(&ws.id, ContactStatus::Pending);
    commit(
        s,
        "a PENDING contact at the limit",
        vec![Write::InsertContact(pending.clone()), guard(&ws.id, 3)],
    )
    .await;

    // Checked after every write, wherever the guard stands.
    let (d, e) = (
        new_contact(&ws.id, ContactStatus::Active),
        new_contact(&ws.id, ContactStatus::Active),
    );
    commit_conflicts(
        s,
        "two ACTIVE contacts behind a guard of 4",
        vec![
            guard(&ws.id, 4),
            Write::InsertContact(d.clone()),
            Write::InsertContact(e.clone()),
        ],
    )
    .await;
    assert_eq!(s.contact(&ws.id, &d.id).await, Ok(None), "nothing stored");
    assert_eq!(active(p, &ws.id).await, 3);
    commit(
        s,
        "two ACTIVE contacts behind a guard of 5",
        vec![
            guard(&ws.id, 5),
            Write::InsertContact(d),
            Write::InsertContact(e),
        ],
    )
    .await;
    assert_eq!(active(p, &ws.id).await, 5);

    // A promotion takes a place too.
    let mut promoted = pending.clone();
    promoted.status = ContactStatus::Active;
    promoted.expires_at = None;
    commit_conflicts(
        s,
        "promoting at the limit",
        vec![Write::UpdateContact(promoted.clone()), guard(&ws.id, 5)],
    )
    .await;
    let stored = s.contact(&ws.id, &pending.id).await.expect("read");
    assert_eq!(stored.map(|c| c.status), Some(ContactStatus::Pending));
    commit(
        s,
        "promoting with room",
        vec![Write::UpdateContact(promoted), guard(&ws.id, 6)],
    )
    .await;
    assert_eq!(active(p, &ws.id).await, 6);

    // Over a lowered limit: refused, and what is ACTIVE stays.
    commit_conflicts(
        s,
        "a PENDING contact over a lowered limit",
        vec![
            Write::InsertContact(new_contact(&ws.id, ContactStatus::Pending)),
            guard(&ws.id, 2),
        ],
    )
    .await;
    assert_eq!(active(p, &ws.id).await, 6);

    // Only the workspace's own contacts count.
    commit(
        s,
        "another workspace's first contact under a limit of 1",
        vec![
            Write::InsertContact(new_contact(&other.id, ContactStatus::Active)),
            guard(&other.id, 1),
        ],
    )
    .await;
    assert_eq!(active(p, &other.id).await, 1);
}

/// Rounds of 12 commits racing for 3 places, each one new ACTIVE contact with the guard:
/// exactly 3 commit, the others conflict, and the workspace ends at its limit each round.
pub async fn active_limit_guard_holds_under_racing_commits(p: &StorePorts) {
    let ws = workspace(p, "active-limit-race").await;
    let mut limit = 0;
    for round in 0..16 {
        limit += 3;
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..12 {
            let store = p.store.clone();
            let writes = vec![
                Write::InsertContact(new_contact(&ws.id, ContactStatus::Active)),
                guard(&ws.id, limit),
            ];
            tasks.spawn(async move { store.commit(ChangeSet { writes }).await });
        }
        let mut won = 0;
        while let Some(done) = tasks.join_next().await {
            match done.unwrap_or_else(|e| panic!("round {round}: a task panicked: {e}")) {
                Ok(()) => won += 1,
                Err(StoreError::Conflict(_)) => {}
                Err(other) => panic!("round {round}: expected a conflict, got {other:?}"),
            }
        }
        assert_eq!(won, 3, "round {round}: commits that took the 3 places");
        assert_eq!(active(p, &ws.id).await, limit, "round {round}: ACTIVE");
    }
}
