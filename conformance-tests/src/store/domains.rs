//! Domains: the DKIM key written once, deletes, and inbound names unique across workspaces.

use posthorn_core::model::{DkimKeyPair, DomainId, DomainRecord, RecordStatus};
use posthorn_core::ports::Write;

use crate::fixtures::{commit, commit_conflicts, domain, now_ms, secs, unique, workspace};
use crate::StorePorts;

fn key(tag: &str) -> DkimKeyPair {
    DkimKeyPair::from_parts(tag.as_bytes().to_vec(), format!("PUB-{tag}"))
}

/// `SetDomainDkimKey` stores a key only on a domain without one; `UpdateDomain` keeps the
/// stored key whatever the record it writes carries, and stores the checks and token.
pub async fn domain_dkim_key_set_once_and_kept(p: &StorePorts) {
    let ws = workspace(p, "dkim").await;
    let now = now_ms();
    let d = domain(&ws.id, &format!("{}.example.org", unique()), now);
    commit(
        p.store.as_ref(),
        "insert",
        vec![Write::InsertDomain(d.clone())],
    )
    .await;
    let read = p.store.domains(&ws.id).await.expect("domains");
    assert_eq!(
        read,
        vec![d.clone()],
        "a new domain reads back whole, without a key"
    );

    let set = |k: DkimKeyPair| Write::SetDomainDkimKey {
        workspace_id: ws.id.clone(),
        id: d.id.clone(),
        key: k,
    };
    commit(p.store.as_ref(), "first key", vec![set(key("one"))]).await;
    commit(
        p.store.as_ref(),
        "second key is a no-op",
        vec![set(key("two"))],
    )
    .await;
    let stored = p.store.domains(&ws.id).await.expect("domains");
    assert_eq!(stored[0].dkim, Some(key("one")), "the first key stays");

    let mut updated = d.clone();
    updated.verified = true;
    updated.verified_by_operator = true;
    updated.updated_at = secs(now, 5);
    updated
        .checks
        .records
        .insert(DomainRecord::Dkim, RecordStatus::Verified);
    updated
        .checks
        .records
        .insert(DomainRecord::Spf, RecordStatus::Failed);
    updated.checks.failing_since = Some(secs(now, 3));
    updated.checks.checked_at = Some(secs(now, 4));
    commit(
        p.store.as_ref(),
        "update without key",
        vec![Write::UpdateDomain(updated.clone())],
    )
    .await;
    let mut expected = updated.clone();
    expected.dkim = Some(key("one"));
    assert_eq!(
        p.store.domains(&ws.id).await,
        Ok(vec![expected]),
        "update keeps the key"
    );

    commit(
        p.store.as_ref(),
        "a key for a missing domain is a no-op",
        vec![Write::SetDomainDkimKey {
            workspace_id: ws.id.clone(),
            id: DomainId::from("no-such-domain"),
            key: key("x"),
        }],
    )
    .await;
}

/// `DeleteDomain` removes the domain of its workspace only; deleting again is a no-op.
pub async fn domain_delete(p: &StorePorts) {
    let ws = workspace(p, "domain-delete").await;
    let other = workspace(p, "domain-delete-other").await;
    let now = now_ms();
    let d = domain(&ws.id, &format!("{}.example.org", unique()), now);
    let keep = domain(&ws.id, &format!("{}.example.org", unique()), secs(now, 1));
    commit(
        p.store.as_ref(),
        "insert",
        vec![
            Write::InsertDomain(d.clone()),
            Write::InsertDomain(keep.clone()),
        ],
    )
    .await;
    commit(
        p.store.as_ref(),
        "delete through the wrong workspace",
        vec![Write::DeleteDomain {
            workspace_id: other.id.clone(),
            id: d.id.clone(),
        }],
    )
    .await;
    assert_eq!(p.store.domains(&ws.id).await.expect("domains").len(), 2);
    let delete = Write::DeleteDomain {
        workspace_id: ws.id.clone(),
        id: d.id.clone(),
    };
    commit(p.store.as_ref(), "delete", vec![delete.clone()]).await;
    commit(p.store.as_ref(), "delete again", vec![delete]).await;
    assert_eq!(p.store.domains(&ws.id).await, Ok(vec![keep]));
    // The name is free again in the workspace.
    let again = domain(&ws.id, &d.domain, secs(now, 2));
    commit(p.store.as_ref(), "re-add", vec![Write::InsertDomain(again)]).await;
}

/// A name is inbound-enabled in one workspace at most, by insert or update;
/// `inbound_domain` finds it whichever workspace has it.
pub async fn domain_inbound_unique_across_workspaces(p: &StorePorts) {
    let a = workspace(p, "inbound-a").await;
    let b = workspace(p, "inbound-b").await;
    let now = now_ms();
    let name = format!("{}.example.org", unique());
    assert_eq!(p.store.inbound_domain(&name).await, Ok(None));

    let mut in_a = domain(&a.id, &name, now);
    in_a.inbound_enabled = true;
    commit(
        p.store.as_ref(),
        "inbound in a",
        vec![Write::InsertDomain(in_a.clone())],
    )
    .await;
    assert_eq!(p.store.inbound_domain(&name).await, Ok(Some(in_a.clone())));

    let mut in_b = domain(&b.id, &name, now);
    in_b.inbound_enabled = true;
    commit_conflicts(
        p.store.as_ref(),
        "inbound insert of a name another workspace receives",
        vec![Write::InsertDomain(in_b.clone())],
    )
    .await;
    in_b.inbound_enabled = false;
    commit(
        p.store.as_ref(),
        "outbound-only in b",
        vec![Write::InsertDomain(in_b.clone())],
    )
    .await;
    let mut enable_b = in_b.clone();
    enable_b.inbound_enabled = true;
    commit_conflicts(
        p.store.as_ref(),
        "inbound update of a name another workspace receives",
        vec![Write::UpdateDomain(enable_b.clone())],
    )
    .await;

    let mut off_a = in_a.clone();
    off_a.inbound_enabled = false;
    commit(
        p.store.as_ref(),
        "a stops",
        vec![Write::UpdateDomain(off_a)],
    )
    .await;
    commit(
        p.store.as_ref(),
        "b starts",
        vec![Write::UpdateDomain(enable_b.clone())],
    )
    .await;
    assert_eq!(p.store.inbound_domain(&name).await, Ok(Some(enable_b)));
}

/// `GuardDomain` lets the write after it through only while the domain is stored with the
/// `updated_at` it names: a stale one (or an unknown domain) conflicts and applies nothing.
pub async fn domain_guard_on_updated_at(p: &StorePorts) {
    let ws = workspace(p, "domain-guard").await;
    let now = now_ms();
    let d = domain(&ws.id, &format!("{}.example.org", unique()), now);
    let s = p.store.as_ref();
    commit(s, "insert", vec![Write::InsertDomain(d.clone())]).await;
    let guard = |updated_at| Write::GuardDomain {
        workspace_id: ws.id.clone(),
        id: d.id.clone(),
        updated_at,
    };
    let mut changed = d.clone();
    changed.inbound_enabled = true;
    changed.updated_at = secs(now, 1);
    commit(
        s,
        "guarded at the stored updated_at",
        vec![guard(now), Write::UpdateDomain(changed.clone())],
    )
    .await;
    let mut stale = d.clone();
    stale.verified = true;
    stale.updated_at = secs(now, 2);
    commit_conflicts(
        s,
        "guarded at an earlier updated_at",
        vec![guard(now), Write::UpdateDomain(stale)],
    )
    .await;
    let stored = s.domains(&ws.id).await.expect("domains");
    assert_eq!(stored.len(), 1);
    assert!(
        stored[0].inbound_enabled && !stored[0].verified,
        "nothing of the stale write"
    );
    assert_eq!(stored[0].updated_at, secs(now, 1));
    commit_conflicts(
        s,
        "an unknown domain",
        vec![Write::GuardDomain {
            workspace_id: ws.id.clone(),
            id: crate::fixtures::fresh_id(),
            updated_at: now,
        }],
    )
    .await;
}
