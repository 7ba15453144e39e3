//! `Write::KeepAKeySet`: revoking a workspace's last key set is refused, also when two
//! revocations race each other.

use posthorn_core::model::{KeySet, NewKeySet, WorkspaceId};
use posthorn_core::ports::{ChangeSet, StoreError, Write};

use crate::fixtures::{commit, commit_conflicts, ids, now_ms, workspace};
use crate::StorePorts;

async fn add_key_set(p: &StorePorts, ws: &WorkspaceId) -> KeySet {
    let set = NewKeySet::generate(ids(), ws, None, vec![], now_ms()).record;
    commit(
        p.store.as_ref(),
        "a key set",
        vec![Write::PutKeySet(set.clone())],
    )
    .await;
    set
}

fn revoke(ws: &WorkspaceId, set: &KeySet) -> Vec<Write> {
    vec![
        Write::DeleteKeySet {
            workspace_id: ws.clone(),
            id: set.id.clone(),
        },
        Write::KeepAKeySet {
            workspace_id: ws.clone(),
        },
    ]
}

/// The last key set stays (the whole change set is refused); with another one left the
/// revocation goes through; of two revocations racing for a workspace's two sets exactly
/// one wins, every round.
pub async fn revoking_the_last_key_set_conflicts(p: &StorePorts) {
    let ws = workspace(p, "last-key-set").await;
    let s = p.store.as_ref();
    let only = add_key_set(p, &ws.id).await;
    commit_conflicts(s, "revoking the only key set", revoke(&ws.id, &only)).await;
    assert_eq!(
        s.key_sets(&ws.id).await,
        Ok(vec![only.clone()]),
        "still there"
    );

    let other = add_key_set(p, &ws.id).await;
    commit(s, "revoking one of two", revoke(&ws.id, &only)).await;
    assert_eq!(s.key_sets(&ws.id).await, Ok(vec![other.clone()]));

    let mut last = other;
    for round in 0..8 {
        let second = add_key_set(p, &ws.id).await;
        let (a, b) = tokio::join!(
            s.commit(ChangeSet {
                writes: revoke(&ws.id, &last)
            }),
            s.commit(ChangeSet {
                writes: revoke(&ws.id, &second)
            }),
        );
        let won = [&a, &b].iter().filter(|r| r.is_ok()).count();
        for r in [&a, &b] {
            assert!(
                matches!(r, Ok(()) | Err(StoreError::Conflict(_))),
                "round {round}: {r:?}"
            );
        }
        assert_eq!(won, 1, "round {round}: exactly one revocation wins");
        let left = s.key_sets(&ws.id).await.expect("key sets");
        assert_eq!(left.len(), 1, "round {round}: one key set left");
        last = left[0].clone();
    }
}
