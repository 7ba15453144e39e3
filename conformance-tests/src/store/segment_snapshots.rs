//! The snapshot state of tracked segments: `tracking_since` and `members_synced`, kept by
//! the store across `PutSegment`s that leave tracking as it was.

use chrono::{DateTime, Utc};
use posthorn_core::model::{Segment, SegmentType, WorkspaceId};
use posthorn_core::ports::Write;

use crate::fixtures::{commit, fresh_id, now_ms, secs, segment, workspace};
use crate::StorePorts;

fn synced(ws: &WorkspaceId, s: &Segment, tracking_since: DateTime<Utc>) -> Write {
    Write::SegmentSynced {
        workspace_id: ws.clone(),
        segment_id: s.id.clone(),
        tracking_since,
    }
}

async fn read(p: &StorePorts, ws: &WorkspaceId, s: &Segment) -> Segment {
    p.store
        .segment(ws, &s.id)
        .await
        .expect("segment read failed")
        .expect("segment is stored")
}

/// A tracked segment starts unsynced; `SegmentSynced` for its `tracking_since` marks it
/// (also in `tracked_segments`, which some stores keep in memory); a `PutSegment` that
/// leaves tracking as it was keeps both, whatever the written record says; switching
/// tracking off and on again starts a new period, which a late `SegmentSynced` for the old
/// one does not mark; `SegmentSynced` of an unknown or untracked segment changes nothing.
pub async fn segment_snapshot_state_kept_by_store(p: &StorePorts) {
    let ws = workspace(p, "snapshots").await;
    let now = now_ms();
    let s = p.store.as_ref();
    let seg = segment(&ws.id, "Tracked", SegmentType::Dynamic, true, now);
    commit(s, "a tracked segment", vec![Write::PutSegment(seg.clone())]).await;
    let stored = read(p, &ws.id, &seg).await;
    assert_eq!(
        stored.tracking_since,
        Some(now),
        "tracking_since as written"
    );
    assert!(
        !stored.members_synced,
        "a new tracked segment is not synced"
    );
    // Read once so a store that keeps tracked segments in memory has them.
    let tracked = s.tracked_segments(&ws.id).await.expect("tracked segments");
    assert!(!tracked[0].members_synced);

    commit(s, "synced", vec![synced(&ws.id, &seg, now)]).await;
    assert!(read(p, &ws.id, &seg).await.members_synced, "marked synced");
    let tracked = s.tracked_segments(&ws.id).await.expect("tracked segments");
    assert!(
        tracked[0].members_synced,
        "tracked_segments must see the mark"
    );

    // A write built from an earlier read: tracking unchanged, so the state is kept.
    let mut renamed = seg.clone();
    renamed.name = "Renamed".into();
    renamed.tracking_since = Some(secs(now, -5));
    renamed.members_synced = false;
    renamed.updated_at = secs(now, 1);
    commit(s, "renamed", vec![Write::PutSegment(renamed)]).await;
    let stored = read(p, &ws.id, &seg).await;
    assert_eq!(stored.name, "Renamed");
    assert_eq!(
        stored.tracking_since,
        Some(now),
        "kept while tracking stays"
    );
    assert!(stored.members_synced, "kept while tracking stays");

    let mut off = stored.clone();
    off.track_membership = false;
    off.tracking_since = None;
    off.updated_at = secs(now, 2);
    commit(s, "tracking off", vec![Write::PutSegment(off)]).await;
    let stored = read(p, &ws.id, &seg).await;
    assert_eq!(stored.tracking_since, None);
    assert!(!stored.members_synced, "untracked: not synced");
    commit(s, "synced while off", vec![synced(&ws.id, &seg, now)]).await;
    assert!(
        !read(p, &ws.id, &seg).await.members_synced,
        "an untracked segment is never marked"
    );

    let again = secs(now, 3);
    let mut on = stored.clone();
    on.track_membership = true;
    on.tracking_since = Some(again);
    on.updated_at = again;
    commit(s, "tracking on again", vec![Write::PutSegment(on)]).await;
    let stored = read(p, &ws.id, &seg).await;
    assert_eq!(stored.tracking_since, Some(again), "a new tracking period");
    assert!(!stored.members_synced, "a new period starts unsynced");
    commit(s, "a late mark", vec![synced(&ws.id, &seg, now)]).await;
    assert!(
        !read(p, &ws.id, &seg).await.members_synced,
        "a mark for the earlier period must not mark the new one"
    );
    commit(s, "synced again", vec![synced(&ws.id, &seg, again)]).await;
    assert!(read(p, &ws.id, &seg).await.members_synced);

    let unknown = Write::SegmentSynced {
        workspace_id: ws.id.clone(),
        segment_id: fresh_id(),
        tracking_since: now,
    };
    commit(s, "an unknown segment", vec![unknown]).await;
}
