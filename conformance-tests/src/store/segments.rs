//! Segments and their stored memberships.

use posthorn_core::model::ContactId;
use posthorn_core::model::{SegmentId, WorkspaceId};
use std::collections::HashSet;

use posthorn_core::model::{Contact, Segment, SegmentType};
use posthorn_core::ports::{Store, Write};
use posthorn_core::segment::{parse_condition, Condition};
use serde_json::json;

use crate::fixtures::{
    add_member, campaign, commit, commit_conflicts, contact, insert_contact, now_ms, remove_member,
    secs, segment, workspace,
};
use crate::StorePorts;

/// Stores `segment` and returns it.
async fn put_segment(p: &StorePorts, segment: Segment) -> Segment {
    commit(
        p.store.as_ref(),
        "storing a segment",
        vec![Write::PutSegment(segment.clone())],
    )
    .await;
    segment
}

/// `count` contacts inserted one after another (so their ids ascend), as stored.
async fn insert_contacts(
    p: &StorePorts,
    workspace_id: &WorkspaceId,
    tag: &str,
    count: usize,
) -> Vec<Contact> {
    let now = now_ms();
    let mut contacts = Vec::new();
    for i in 0..count {
        contacts.push(
            insert_contact(
                p,
                workspace_id,
                &format!("{tag}{i}"),
                true,
                secs(now, i as i64),
            )
            .await,
        );
    }
    contacts.sort_by(|a, b| a.id.cmp(&b.id));
    contacts
}

fn ids<'a>(contacts: impl IntoIterator<Item = &'a Contact>) -> Vec<ContactId> {
    contacts.into_iter().map(|c| c.id.clone()).collect()
}

fn set(items: &[&SegmentId]) -> HashSet<SegmentId> {
    items.iter().copied().cloned().collect()
}

async fn member_ids_all(
    store: &dyn Store,
    ws: &WorkspaceId,
    segment_id: &SegmentId,
) -> Vec<ContactId> {
    store
        .segment_member_ids(ws, segment_id, None, 1000)
        .await
        .expect("segment_member_ids failed")
}

/// Segments read back by id, list newest first with the workspace's total, `PutSegment`
/// replaces, and `DeleteSegment` removes the segment with its memberships.
pub async fn segment_put_get_list_delete(p: &StorePorts) {
    let ws = workspace(p, "segments").await;
    let now = now_ms();
    let s = p.store.as_ref();
    let a = put_segment(
        p,
        segment(&ws.id, "Static A", SegmentType::Static, false, now),
    )
    .await;
    let b = put_segment(
        p,
        segment(
            &ws.id,
            "Tracked B",
            SegmentType::Dynamic,
            true,
            secs(now, 10),
        ),
    )
    .await;
    let c = put_segment(
        p,
        segment(
            &ws.id,
            "Plain C",
            SegmentType::Dynamic,
            false,
            secs(now, 20),
        ),
    )
    .await;

    assert_eq!(
        s.segment(&ws.id, &a.id).await,
        Ok(Some(a.clone())),
        "segment A differs"
    );
    assert_eq!(
        s.segment(&ws.id, &b.id).await,
        Ok(Some(b.clone())),
        "segment B differs"
    );
    assert_eq!(
        s.segment(&ws.id, &crate::fixtures::fresh_id()).await,
        Ok(None),
        "an unknown segment id must read as None"
    );
    assert_eq!(
        s.segments(&ws.id, 0, 10).await,
        Ok((vec![c.clone(), b.clone(), a.clone()], 3)),
        "segments newest first with the total"
    );
    assert_eq!(
        s.segments(&ws.id, 1, 1).await,
        Ok((vec![b.clone()], 3)),
        "offset and limit"
    );
    assert_eq!(
        s.segments(&ws.id, 5, 10).await,
        Ok((vec![], 3)),
        "offset past the end"
    );

    let mut renamed = b.clone();
    renamed.name = "Renamed B".into();
    renamed.description = None;
    renamed.track_membership = false;
    renamed.updated_at = secs(now, 30);
    put_segment(p, renamed.clone()).await;
    assert_eq!(
        s.segment(&ws.id, &b.id).await,
        Ok(Some(renamed.clone())),
        "PutSegment must replace"
    );
    assert_eq!(
        s.segments(&ws.id, 0, 10).await.map(|(_, total)| total),
        Ok(3),
        "replacing must not add a segment"
    );

    let members = insert_contacts(p, &ws.id, "seg-member", 2).await;
    commit(
        s,
        "adding members to A",
        members
            .iter()
            .map(|m| add_member(&ws.id, &a.id, &m.id))
            .collect(),
    )
    .await;
    assert_eq!(s.segment_member_count(&ws.id, &a.id).await, Ok(2));

    let delete = Write::DeleteSegment {
        workspace_id: ws.id.clone(),
        id: a.id.clone(),
    };
    commit(s, "deleting segment A", vec![delete.clone()]).await;
    assert_eq!(
        s.segment(&ws.id, &a.id).await,
        Ok(None),
        "deleted segment still readable"
    );
    assert_eq!(
        s.segments(&ws.id, 0, 10).await,
        Ok((vec![c.clone(), renamed.clone()], 2)),
        "deleted segment still listed"
    );
    assert_eq!(
        s.segment_member_count(&ws.id, &a.id).await,
        Ok(0),
        "memberships outlived the segment"
    );
    assert_eq!(s.segment_members(&ws.id, &a.id, 0, 10).await, Ok(vec![]));
    assert_eq!(
        member_ids_all(s, &ws.id, &a.id).await,
        Vec::<ContactId>::new()
    );
    for m in &members {
        assert_eq!(
            s.memberships(&ws.id, &m.id).await,
            Ok(HashSet::new()),
            "a contact is still a member of a deleted segment"
        );
    }
    commit(s, "deleting an absent segment", vec![delete]).await;

    // The same id stored again starts without members.
    put_segment(p, a.clone()).await;
    assert_eq!(
        s.segment_member_count(&ws.id, &a.id).await,
        Ok(0),
        "memberships came back"
    );
}

/// `tracked_segments` lists only DYNAMIC segments with `track_membership`, oldest first.
pub async fn segments_tracked_only_dynamic_with_tracking(p: &StorePorts) {
    let ws = workspace(p, "tracked").await;
    let now = now_ms();
    let s = p.store.as_ref();
    assert_eq!(s.tracked_segments(&ws.id).await, Ok(vec![]));
    let later = put_segment(
        p,
        segment(&ws.id, "later", SegmentType::Dynamic, true, secs(now, 20)),
    )
    .await;
    put_segment(
        p,
        segment(&ws.id, "static", SegmentType::Static, true, secs(now, 5)),
    )
    .await;
    put_segment(
        p,
        segment(
            &ws.id,
            "untracked",
            SegmentType::Dynamic,
            false,
            secs(now, 10),
        ),
    )
    .await;
    let earlier = put_segment(
        p,
        segment(&ws.id, "earlier", SegmentType::Dynamic, true, now),
    )
    .await;
    assert_eq!(
        s.tracked_segments(&ws.id).await,
        Ok(vec![earlier.clone(), later.clone()]),
        "tracked segments: DYNAMIC with track_membership, oldest first"
    );

    let mut untracked = later.clone();
    untracked.track_membership = false;
    put_segment(p, untracked).await;
    assert_eq!(
        s.tracked_segments(&ws.id).await,
        Ok(vec![earlier]),
        "a segment no longer tracked is still listed"
    );
}

/// Adding a member twice or removing a non-member conflicts and applies nothing of the
/// change set; adds, removes and deletes of a failed change set are rolled back.
pub async fn segment_members_guarded_and_rolled_back(p: &StorePorts) {
    let ws = workspace(p, "members").await;
    let now = now_ms();
    let s = p.store.as_ref();
    let seg = put_segment(
        p,
        segment(&ws.id, "members", SegmentType::Static, false, now),
    )
    .await;
    let cs = insert_contacts(p, &ws.id, "member", 3).await;
    let (c1, c2, c3) = (&cs[0], &cs[1], &cs[2]);
    commit(s, "adding c1", vec![add_member(&ws.id, &seg.id, &c1.id)]).await;

    commit_conflicts(
        s,
        "adding c2, then c1 again",
        vec![
            add_member(&ws.id, &seg.id, &c2.id),
            add_member(&ws.id, &seg.id, &c1.id),
        ],
    )
    .await;
    assert_eq!(
        member_ids_all(s, &ws.id, &seg.id).await,
        vec![c1.id.clone()],
        "c2 was added"
    );
    assert_eq!(s.memberships(&ws.id, &c2.id).await, Ok(HashSet::new()));

    commit_conflicts(
        s,
        "removing c1, then removing c3 who is no member",
        vec![
            remove_member(&ws.id, &seg.id, &c1.id),
            remove_member(&ws.id, &seg.id, &c3.id),
        ],
    )
    .await;
    assert_eq!(
        member_ids_all(s, &ws.id, &seg.id).await,
        vec![c1.id.clone()],
        "c1 was removed"
    );
    assert_eq!(s.memberships(&ws.id, &c1.id).await, Ok(set(&[&seg.id])));

    // In order: add then remove, remove then add back.
    commit(
        s,
        "add c2 and remove it; remove c1 and add it back",
        vec![
            add_member(&ws.id, &seg.id, &c2.id),
            remove_member(&ws.id, &seg.id, &c2.id),
            remove_member(&ws.id, &seg.id, &c1.id),
            add_member(&ws.id, &seg.id, &c1.id),
            add_member(&ws.id, &seg.id, &c3.id),
        ],
    )
    .await;
    assert_eq!(
        member_ids_all(s, &ws.id, &seg.id).await,
        vec![c1.id.clone(), c3.id.clone()]
    );

    // A failed change set that deleted the segment and a contact restores both memberships.
    let mut clash = contact(&ws.id, "clash", true, now);
    clash.email = c2.email.clone();
    commit_conflicts(
        s,
        "deleting the segment and c3, then a conflicting insert",
        vec![
            Write::DeleteContact {
                workspace_id: ws.id.clone(),
                id: c3.id.clone(),
            },
            add_member(&ws.id, &seg.id, &c2.id),
            Write::DeleteSegment {
                workspace_id: ws.id.clone(),
                id: seg.id.clone(),
            },
            Write::InsertContact(clash),
        ],
    )
    .await;
    assert_eq!(
        s.segment(&ws.id, &seg.id).await,
        Ok(Some(seg.clone())),
        "segment not restored"
    );
    assert_eq!(
        member_ids_all(s, &ws.id, &seg.id).await,
        vec![c1.id.clone(), c3.id.clone()],
        "members not restored"
    );
    assert_eq!(s.segment_member_count(&ws.id, &seg.id).await, Ok(2));
    assert_eq!(
        s.memberships(&ws.id, &c3.id).await,
        Ok(set(&[&seg.id])),
        "c3's membership not restored"
    );
    assert_eq!(
        s.memberships(&ws.id, &c2.id).await,
        Ok(HashSet::new()),
        "c2's membership was applied"
    );
}

/// Member count, members (newest contact first, offset paging) and member ids (ascending,
/// keyset paging) agree with the stored memberships.
pub async fn segment_members_paged(p: &StorePorts) {
    let ws = workspace(p, "paging").await;
    let now = now_ms();
    let s = p.store.as_ref();
    let seg = put_segment(p, segment(&ws.id, "paged", SegmentType::Static, false, now)).await;
    let other = put_segment(p, segment(&ws.id, "other", SegmentType::Static, false, now)).await;
    let cs = insert_contacts(p, &ws.id, "paged", 9).await;
    // Every contact but the 3rd and the 7th is a member; the 3rd is in the other segment.
    let members: Vec<&Contact> = cs
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 2 && *i != 6)
        .map(|(_, c)| c)
        .collect();
    let mut writes: Vec<Write> = members
        .iter()
        .map(|c| add_member(&ws.id, &seg.id, &c.id))
        .collect();
    writes.push(add_member(&ws.id, &other.id, &cs[2].id));
    commit(s, "adding members", writes).await;

    assert_eq!(s.segment_member_count(&ws.id, &seg.id).await, Ok(7));
    assert_eq!(s.segment_member_count(&ws.id, &other.id).await, Ok(1));
    assert_eq!(
        s.segment_member_count(&ws.id, &crate::fixtures::fresh_id())
            .await,
        Ok(0)
    );

    let newest_first: Vec<Contact> = members.iter().rev().map(|c| (*c).clone()).collect();
    let mut walked = Vec::new();
    for offset in (0..9).step_by(3) {
        let page = s
            .segment_members(&ws.id, &seg.id, offset, 3)
            .await
            .expect("segment_members failed");
        let expected_len = 7usize.saturating_sub(offset).min(3);
        assert_eq!(page.len(), expected_len, "page at offset {offset}");
        walked.extend(page);
    }
    assert_eq!(
        walked, newest_first,
        "members must be whole contacts, newest first"
    );
    assert_eq!(s.segment_members(&ws.id, &seg.id, 7, 3).await, Ok(vec![]));

    let ascending = ids(members.iter().copied());
    let mut walked: Vec<ContactId> = Vec::new();
    let mut after: Option<ContactId> = None;
    loop {
        let page = s
            .segment_member_ids(&ws.id, &seg.id, after.as_ref(), 2)
            .await
            .expect("segment_member_ids failed");
        assert!(page.len() <= 2, "more ids than the limit");
        let Some(last) = page.last().cloned() else {
            break;
        };
        walked.extend(page);
        after = Some(last);
    }
    assert_eq!(
        walked, ascending,
        "member ids ascending, strictly after after_id"
    );
    // `after_id` need not be a member: the 3rd contact is not one.
    assert_eq!(
        s.segment_member_ids(&ws.id, &seg.id, Some(&cs[2].id), 2)
            .await,
        Ok(vec![cs[3].id.clone(), cs[4].id.clone()])
    );
    assert_eq!(
        s.segment_member_ids(&ws.id, &seg.id, Some(&cs[8].id), 2)
            .await,
        Ok(vec![])
    );
    assert_eq!(
        member_ids_all(s, &ws.id, &other.id).await,
        vec![cs[2].id.clone()]
    );
}

/// `memberships` lists the segments a contact is a stored member of.
pub async fn segment_memberships_of_contact(p: &StorePorts) {
    let ws = workspace(p, "memberships").await;
    let now = now_ms();
    let s = p.store.as_ref();
    let s1 = put_segment(p, segment(&ws.id, "one", SegmentType::Static, false, now)).await;
    let s2 = put_segment(p, segment(&ws.id, "two", SegmentType::Dynamic, true, now)).await;
    let cs = insert_contacts(p, &ws.id, "memberships", 3).await;
    commit(
        s,
        "memberships",
        vec![
            add_member(&ws.id, &s1.id, &cs[0].id),
            add_member(&ws.id, &s2.id, &cs[0].id),
            add_member(&ws.id, &s2.id, &cs[1].id),
        ],
    )
    .await;
    assert_eq!(
        s.memberships(&ws.id, &cs[0].id).await,
        Ok(set(&[&s1.id, &s2.id]))
    );
    assert_eq!(s.memberships(&ws.id, &cs[1].id).await, Ok(set(&[&s2.id])));
    assert_eq!(s.memberships(&ws.id, &cs[2].id).await, Ok(HashSet::new()));
    assert_eq!(
        s.memberships(&ws.id, &crate::fixtures::fresh_id()).await,
        Ok(HashSet::new())
    );
    commit(
        s,
        "leaving s2",
        vec![remove_member(&ws.id, &s2.id, &cs[0].id)],
    )
    .await;
    assert_eq!(s.memberships(&ws.id, &cs[0].id).await, Ok(set(&[&s1.id])));
}

/// `DeleteContact` removes the contact's stored memberships from every segment.
pub async fn contact_delete_removes_memberships(p: &StorePorts) {
    let ws = workspace(p, "delete-members").await;
    let now = now_ms();
    let s = p.store.as_ref();
    let s1 = put_segment(p, segment(&ws.id, "one", SegmentType::Static, false, now)).await;
    let s2 = put_segment(p, segment(&ws.id, "two", SegmentType::Dynamic, true, now)).await;
    let cs = insert_contacts(p, &ws.id, "delete-members", 2).await;
    commit(
        s,
        "memberships",
        vec![
            add_member(&ws.id, &s1.id, &cs[0].id),
            add_member(&ws.id, &s2.id, &cs[0].id),
            add_member(&ws.id, &s2.id, &cs[1].id),
        ],
    )
    .await;
    commit(
        s,
        "deleting the first contact",
        vec![Write::DeleteContact {
            workspace_id: ws.id.clone(),
            id: cs[0].id.clone(),
        }],
    )
    .await;
    assert_eq!(s.memberships(&ws.id, &cs[0].id).await, Ok(HashSet::new()));
    assert_eq!(s.segment_member_count(&ws.id, &s1.id).await, Ok(0));
    assert_eq!(s.segment_member_count(&ws.id, &s2.id).await, Ok(1));
    assert_eq!(
        member_ids_all(s, &ws.id, &s1.id).await,
        Vec::<ContactId>::new()
    );
    assert_eq!(
        member_ids_all(s, &ws.id, &s2.id).await,
        vec![cs[1].id.clone()]
    );
    assert_eq!(
        s.segment_members(&ws.id, &s2.id, 0, 10).await,
        Ok(vec![cs[1].clone()])
    );
    assert_eq!(s.memberships(&ws.id, &cs[1].id).await, Ok(set(&[&s2.id])));

    // A contact inserted again with the same id starts without memberships.
    commit(
        s,
        "re-inserting the contact",
        vec![Write::InsertContact(cs[0].clone())],
    )
    .await;
    assert_eq!(s.memberships(&ws.id, &cs[0].id).await, Ok(HashSet::new()));
    assert_eq!(s.segment_member_count(&ws.id, &s1.id).await, Ok(0));
}

/// A condition with numbers that a JSON round trip through a database would rewrite
/// (`1e300` comes back from jsonb as 301 digits) and keys in non-sorted order.
fn awkward_condition() -> Condition {
    parse_condition(
        &json!({"logic": "or", "groups": [
            {"filters": [
                {"field": "data.z", "operator": "greaterThan", "value": 1e300},
                {"field": "data.a", "operator": "equals", "value": 0.30000000000000004},
                {"field": "event.x", "operator": "triggeredWithin", "value": 1.5, "unit": "HOURS"}
            ], "conditions": {"groups": []}},
            {}
        ]}),
        "condition",
    )
    .unwrap_or_else(|e| panic!("the awkward condition is invalid: {e:?}"))
}

/// A segment's condition and a campaign's audience condition read back exactly as
/// stored, awkward numbers and all.
pub async fn conditions_read_back_exactly(p: &StorePorts) {
    let ws = workspace(p, "odd-conditions").await;
    let now = now_ms();
    let mut seg = segment(&ws.id, "odd", SegmentType::Dynamic, true, now);
    seg.condition = Some(awkward_condition());
    let mut audience = campaign(&ws.id, "odd", now);
    audience.audience_condition = Some(awkward_condition());
    commit(
        p.store.as_ref(),
        "a segment and a campaign with awkward conditions",
        vec![
            Write::PutSegment(seg.clone()),
            Write::InsertCampaign(audience.clone()),
        ],
    )
    .await;
    assert_eq!(
        p.store.segment(&ws.id, &seg.id).await,
        Ok(Some(seg)),
        "the segment's condition"
    );
    assert_eq!(
        p.store.campaign(&ws.id, &audience.id).await,
        Ok(Some(audience)),
        "the campaign's audience condition"
    );
}

/// A membership of a contact or segment that does not exist is refused (`Conflict`), so a
/// membership job racing a deletion never leaves an orphan behind.
pub async fn segment_member_of_missing_contact_or_segment_conflicts(p: &StorePorts) {
    let ws = workspace(p, "orphans").await;
    let now = now_ms();
    let s = p.store.as_ref();
    let seg = put_segment(
        p,
        segment(&ws.id, "orphans", SegmentType::Static, false, now),
    )
    .await;
    let cs = insert_contacts(p, &ws.id, "orphan", 1).await;
    let missing_contact: ContactId = crate::fixtures::fresh_id();
    let missing_segment: SegmentId = crate::fixtures::fresh_id();
    commit_conflicts(
        s,
        "a membership of a contact that does not exist",
        vec![add_member(&ws.id, &seg.id, &missing_contact)],
    )
    .await;
    commit_conflicts(
        s,
        "a membership in a segment that does not exist",
        vec![add_member(&ws.id, &missing_segment, &cs[0].id)],
    )
    .await;
    assert_eq!(s.memberships(&ws.id, &cs[0].id).await, Ok(HashSet::new()));
    assert!(member_ids_all(s, &ws.id, &seg.id).await.is_empty());
}
