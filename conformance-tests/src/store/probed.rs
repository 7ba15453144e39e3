//! Checks that need probes below the ports (see [`ProbedStore`]).

use std::collections::HashSet;
use std::time::Duration;

use posthorn_core::model::SegmentType;
use posthorn_core::ports::{JobPayload, Write};

use super::jobs::{poll_once, waiting_worker};
use crate::fixtures::{add_member, commit, contact, job, now_ms, secs, segment, workspace};
use crate::ProbedStore;

/// A worker waiting in `wait_for_work` (with a timeout far beyond the bound below) is not
/// woken while nothing happens, and is woken by one commit that enqueues a job once the
/// adapter hears commits (`commits_heard`; at once where it is `None`).
pub async fn job_one_commit_wakes_a_waiting_worker(p: &ProbedStore) {
    let ws = workspace(&p.ports, "wake-once").await;
    let mut waiter = waiting_worker(p.ports.jobs.clone()).await;
    if let Some(commits_heard) = &p.commits_heard {
        commits_heard().await;
    }
    let again = poll_once(&mut waiter).await;
    assert!(again.is_pending(), "woken with no work at all");
    commit(
        p.ports.store.as_ref(),
        "enqueueing one job",
        vec![Write::EnqueueJob(job(&ws.id, now_ms()))],
    )
    .await;
    assert!(
        tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .is_ok(),
        "not woken by the commit within 10 s"
    );
}

/// A due job whose payload this version cannot read (`plant_unreadable_job`) is parked
/// as dead, not handed out: a claim returns only the readable job. Where the adapter keeps
/// payloads typed (`None`), the readable job is claimed and nothing is dead.
pub async fn job_unreadable_payload_parked_not_handed_out(p: &ProbedStore) {
    let ws = workspace(&p.ports, "unreadable").await;
    let planted = match &p.plant_unreadable_job {
        Some(plant) => {
            plant().await;
            1
        }
        None => 0,
    };
    let now = now_ms();
    commit(
        p.ports.store.as_ref(),
        "enqueueing a readable job",
        vec![Write::EnqueueJob(job(&ws.id, secs(now, -1)))],
    )
    .await;
    let claimed = p
        .ports
        .jobs
        .claim(now, Duration::from_secs(60), 10)
        .await
        .expect("claim failed");
    assert_eq!(claimed.len(), 1, "only the readable job is handed out");
    assert!(
        matches!(claimed[0].payload, JobPayload::DeliverEmail { .. }),
        "the claimed payload: {:?}",
        claimed[0].payload
    );
    let stats = p.ports.jobs.stats(now).await.expect("stats failed");
    assert_eq!(
        (stats.running, stats.dead),
        (1, planted),
        "the unreadable job is parked as dead"
    );
}

/// Deleting a contact removes its memberships and deleting a segment removes its members,
/// in every segment and for every contact: nothing is left that a contact or segment
/// stored again under the same id would find, and (`membership_rows`) no row is left.
pub async fn memberships_go_with_their_contact_or_segment(p: &ProbedStore) {
    let s = p.ports.store.as_ref();
    let ws = workspace(&p.ports, "memberships").await;
    let now = now_ms();
    let kept = contact(&ws.id, "kept", true, now);
    let gone = contact(&ws.id, "gone", true, now);
    let a = segment(&ws.id, "a", SegmentType::Static, false, now);
    let b = segment(&ws.id, "b", SegmentType::Static, false, now);
    let mut writes = vec![
        Write::InsertContact(kept.clone()),
        Write::InsertContact(gone.clone()),
        Write::PutSegment(a.clone()),
        Write::PutSegment(b.clone()),
    ];
    for seg in [&a, &b] {
        for c in [&kept, &gone] {
            writes.push(add_member(&ws.id, &seg.id, &c.id));
        }
    }
    commit(s, "two contacts in two segments", writes).await;
    commit(
        s,
        "deleting a contact and a segment",
        vec![
            Write::DeleteContact {
                workspace_id: ws.id.clone(),
                id: gone.id.clone(),
            },
            Write::DeleteSegment {
                workspace_id: ws.id.clone(),
                id: b.id.clone(),
            },
        ],
    )
    .await;
    if let Some(rows) = &p.membership_rows {
        assert_eq!(rows().await, 1, "only (a, kept) is left");
    }
    assert_eq!(
        s.segment_member_ids(&ws.id, &a.id, None, 10).await,
        Ok(vec![kept.id.clone()])
    );
    assert_eq!(s.segment_member_count(&ws.id, &b.id).await, Ok(0));
    assert_eq!(
        s.memberships(&ws.id, &kept.id).await,
        Ok(HashSet::from([a.id.clone()]))
    );

    // Stored again under their ids, the deleted ones start with no memberships.
    commit(
        s,
        "the deleted contact and segment stored again",
        vec![
            Write::InsertContact(gone.clone()),
            Write::PutSegment(b.clone()),
        ],
    )
    .await;
    assert_eq!(s.memberships(&ws.id, &gone.id).await, Ok(HashSet::new()));
    assert_eq!(s.segment_member_count(&ws.id, &b.id).await, Ok(0));
    assert_eq!(
        s.segment_member_ids(&ws.id, &b.id, None, 10).await,
        Ok(vec![])
    );
    assert_eq!(s.segment_member_count(&ws.id, &a.id).await, Ok(1));
    if let Some(rows) = &p.membership_rows {
        assert_eq!(rows().await, 1, "still only (a, kept)");
    }
}
