//! Received mail: records with their raw bytes, the processed mark that makes their
//! events once-only, and the retention purge.

use chrono::{DateTime, Utc};
use posthorn_core::model::{EmailId, InboundEmail, ProviderVerdicts, Verdict, WorkspaceId};
use posthorn_core::ports::Write;

use crate::fixtures::{commit, commit_conflicts, fresh_id, now_ms, secs, workspace};
use crate::StorePorts;

/// An unprocessed received message of `ws` with raw bytes that are not UTF-8.
fn inbound(ws: &WorkspaceId, received_at: DateTime<Utc>) -> InboundEmail {
    InboundEmail {
        id: fresh_id(),
        workspace_id: ws.clone(),
        envelope_from: Some("sender@example.org".into()),
        recipients: vec!["a@in.example".into(), "b@in.example".into()],
        client_ip: "2001:db8::25".parse().ok(),
        helo: Some("mx.example.org".into()),
        raw: Some(b"Subject: hi\r\n\r\n\xff\xfe binary \x01\r\n".to_vec()),
        received_at,
        processed_at: None,
        provider_verdicts: ProviderVerdicts::default(),
    }
}

async fn read(p: &StorePorts, ws: &WorkspaceId, id: &EmailId) -> Option<InboundEmail> {
    match p.store.inbound_email(ws, id).await {
        Ok(found) => found,
        Err(e) => panic!("reading inbound email {id}: {e}"),
    }
}

/// A received message reads back unchanged (raw bytes, IPv6 address, null sender, a
/// provider's verdicts too), only in its own workspace; a second insert of its id
/// conflicts.
pub async fn inbound_email_round_trip(p: &StorePorts) {
    let ws = workspace(p, "inbound").await;
    let other = workspace(p, "inbound-other").await;
    let now = now_ms();
    let mail = inbound(&ws.id, now);
    let bare = InboundEmail {
        envelope_from: None,
        client_ip: None,
        helo: None,
        ..inbound(&ws.id, now)
    };
    // As Amazon SES hands one over: the verdicts it gave, some of them.
    let judged = InboundEmail {
        provider_verdicts: ProviderVerdicts {
            spam: Some(Verdict::Pass),
            virus: Some(Verdict::Fail),
            spf: Some(Verdict::Gray),
            dkim: None,
            dmarc: Some(Verdict::ProcessingFailed),
        },
        ..inbound(&ws.id, now)
    };
    commit(
        p.store.as_ref(),
        "insert inbound",
        vec![
            Write::InsertInboundEmail(mail.clone()),
            Write::InsertInboundEmail(bare.clone()),
            Write::InsertInboundEmail(judged.clone()),
        ],
    )
    .await;
    assert_eq!(read(p, &ws.id, &judged.id).await, Some(judged));
    assert_eq!(read(p, &ws.id, &mail.id).await, Some(mail.clone()));
    assert_eq!(read(p, &ws.id, &bare.id).await, Some(bare));
    assert_eq!(read(p, &other.id, &mail.id).await, None);
    assert_eq!(read(p, &ws.id, &fresh_id()).await, None);
    commit_conflicts(
        p.store.as_ref(),
        "insert of a taken id",
        vec![Write::InsertInboundEmail(mail)],
    )
    .await;
}

/// `MarkInboundProcessed` succeeds once; a second mark, a mark of a missing record or one
/// in another workspace conflicts, and a conflicting change set leaves nothing applied.
pub async fn inbound_processed_once(p: &StorePorts) {
    let ws = workspace(p, "inbound-mark").await;
    let other = workspace(p, "inbound-mark-other").await;
    let now = now_ms();
    let mail = inbound(&ws.id, now);
    commit(
        p.store.as_ref(),
        "insert inbound",
        vec![Write::InsertInboundEmail(mail.clone())],
    )
    .await;
    let mark = |ws: &WorkspaceId, id: &EmailId, at| Write::MarkInboundProcessed {
        workspace_id: ws.clone(),
        id: id.clone(),
        at,
    };
    commit_conflicts(
        p.store.as_ref(),
        "mark in another workspace",
        vec![mark(&other.id, &mail.id, now)],
    )
    .await;
    commit_conflicts(
        p.store.as_ref(),
        "mark of a missing record",
        vec![mark(&ws.id, &fresh_id(), now)],
    )
    .await;
    // A mark followed by a failing write is rolled back with it.
    commit_conflicts(
        p.store.as_ref(),
        "mark then a second mark",
        vec![
            mark(&ws.id, &mail.id, secs(now, 1)),
            mark(&ws.id, &mail.id, secs(now, 2)),
        ],
    )
    .await;
    assert_eq!(
        read(p, &ws.id, &mail.id).await.map(|m| m.processed_at),
        Some(None)
    );
    commit(
        p.store.as_ref(),
        "mark",
        vec![mark(&ws.id, &mail.id, secs(now, 3))],
    )
    .await;
    assert_eq!(
        read(p, &ws.id, &mail.id).await.map(|m| m.processed_at),
        Some(Some(secs(now, 3)))
    );
    commit_conflicts(
        p.store.as_ref(),
        "second mark",
        vec![mark(&ws.id, &mail.id, secs(now, 4))],
    )
    .await;
}

/// `PurgeInboundRaw` drops the bytes of processed messages received before the cut-off,
/// in every workspace, and nothing else: newer and unprocessed messages keep theirs.
pub async fn inbound_purge_drops_only_expired_processed_raw(p: &StorePorts) {
    let ws = workspace(p, "inbound-purge").await;
    let other = workspace(p, "inbound-purge-other").await;
    let now = now_ms();
    let old = secs(now, -3600);
    let processed = |mut m: InboundEmail| {
        m.processed_at = Some(secs(m.received_at, 1));
        m
    };
    let expired = processed(inbound(&ws.id, old));
    let expired_elsewhere = processed(inbound(&other.id, old));
    let recent = processed(inbound(&ws.id, now));
    let pending = inbound(&ws.id, old);
    commit(
        p.store.as_ref(),
        "insert inbound",
        [&expired, &expired_elsewhere, &recent, &pending]
            .into_iter()
            .map(|m| Write::InsertInboundEmail(m.clone()))
            .collect(),
    )
    .await;
    commit(
        p.store.as_ref(),
        "purge",
        vec![Write::PurgeInboundRaw {
            before: secs(now, -60),
        }],
    )
    .await;
    for (mail, kept) in [
        (&expired, false),
        (&expired_elsewhere, false),
        (&recent, true),
        (&pending, true),
    ] {
        let found = read(p, &mail.workspace_id, &mail.id)
            .await
            .unwrap_or_else(|| panic!("inbound email {} is gone", mail.id));
        let want = if kept {
            mail.clone()
        } else {
            InboundEmail {
                raw: None,
                ..mail.clone()
            }
        };
        assert_eq!(found, want, "kept raw: {kept}");
    }
}
