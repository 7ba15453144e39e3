//! Email lifecycle: the feedback fields, lookups by provider and Message-ID, outcome counts
//! and the deployment-wide secrets.

use posthorn_core::model::{
    BounceType, CampaignId, EmailId, EmailLifecycle, EmailStats, EmailStatus,
};
use posthorn_core::ports::{EmailStatsQuery, Write};

use crate::fixtures::{
    campaign_email, commit, email_record, insert_contact, now_ms, secs, unique, workspace,
};
use crate::StorePorts;

/// `GuardEmail` holds while the email's `updated_at` is the one given and conflicts once
/// another update moved it (or the email is gone), failing its whole change set.
pub async fn email_guard_refuses_a_stale_read(p: &StorePorts) {
    let ws = workspace(p, "guard").await;
    let now = now_ms();
    let contact = insert_contact(p, &ws.id, "guarded", true, now).await;
    let mut mail = email_record(&contact, now);
    commit(
        p.store.as_ref(),
        "insert",
        vec![Write::InsertEmail(mail.clone())],
    )
    .await;
    let guard = |at| Write::GuardEmail {
        workspace_id: ws.id.clone(),
        id: mail.id.clone(),
        updated_at: at,
    };
    let read_at = mail.updated_at;
    mail.lifecycle.opens = 1;
    mail.updated_at = secs(now, 1);
    commit(
        p.store.as_ref(),
        "guarded update",
        vec![guard(read_at), Write::UpdateEmail(mail.clone())],
    )
    .await;
    // A second writer that read the email before that update is refused, and so is the
    // rest of its change set.
    let mut stale = mail.clone();
    stale.lifecycle.opens = 7;
    stale.updated_at = secs(now, 2);
    let mut changes = posthorn_core::ports::ChangeSet::new();
    changes.push(guard(read_at));
    changes.push(Write::UpdateEmail(stale));
    assert!(matches!(
        p.store.commit(changes).await,
        Err(posthorn_core::ports::StoreError::Conflict(_))
    ));
    assert_eq!(
        p.store.email(&ws.id, &mail.id).await,
        Ok(Some(mail.clone()))
    );
    let mut gone = posthorn_core::ports::ChangeSet::new();
    gone.push(Write::GuardEmail {
        workspace_id: ws.id.clone(),
        id: crate::fixtures::fresh_id(),
        updated_at: read_at,
    });
    assert!(matches!(
        p.store.commit(gone).await,
        Err(posthorn_core::ports::StoreError::Conflict(_))
    ));
}

/// Every lifecycle field is stored by insert and update and read back unchanged.
pub async fn email_lifecycle_fields_round_trip(p: &StorePorts) {
    let ws = workspace(p, "lifecycle").await;
    let now = now_ms();
    let contact = insert_contact(p, &ws.id, "life", true, now).await;
    let mut mail = email_record(&contact, now);
    mail.lifecycle = EmailLifecycle {
        delivered_at: Some(secs(now, 1)),
        opened_at: Some(secs(now, 2)),
        last_opened_at: Some(secs(now, 3)),
        opens: 2,
        ..EmailLifecycle::default()
    };
    commit(
        p.store.as_ref(),
        "insert",
        vec![Write::InsertEmail(mail.clone())],
    )
    .await;
    assert_eq!(
        p.store.email(&ws.id, &mail.id).await,
        Ok(Some(mail.clone()))
    );

    mail.status = EmailStatus::Bounced;
    mail.lifecycle = EmailLifecycle {
        delivered_at: None,
        opened_at: Some(secs(now, 2)),
        last_opened_at: Some(secs(now, 4)),
        opens: 3,
        clicked_at: Some(secs(now, 5)),
        last_clicked_at: Some(secs(now, 6)),
        clicks: u32::MAX / 4,
        bounced_at: Some(secs(now, 7)),
        bounce_type: Some(BounceType::Permanent),
        bounce_detail: Some("550 5.1.1 unknown user".into()),
        complained_at: Some(secs(now, 8)),
    };
    commit(
        p.store.as_ref(),
        "update",
        vec![Write::UpdateEmail(mail.clone())],
    )
    .await;
    assert_eq!(p.store.email(&ws.id, &mail.id).await, Ok(Some(mail)));
}

/// Emails are found by provider message id and by Message-ID in any workspace, without
/// their content; unknown ids find nothing, and a changed provider id is found under the
/// new one only.
pub async fn emails_found_by_provider_and_message_id(p: &StorePorts) {
    let now = now_ms();
    let a = workspace(p, "lookup-a").await;
    let b = workspace(p, "lookup-b").await;
    let ca = insert_contact(p, &a.id, "la", true, now).await;
    let cb = insert_contact(p, &b.id, "lb", true, now).await;
    let mut first = email_record(&ca, now);
    let provider = format!("prov-{}", unique());
    first.provider_message_id = Some(provider.clone());
    let second = email_record(&cb, now);
    commit(
        p.store.as_ref(),
        "insert",
        vec![
            Write::InsertEmail(first.clone()),
            Write::InsertEmail(second.clone()),
        ],
    )
    .await;
    assert_eq!(
        p.store.email_by_provider_id(&provider).await,
        Ok(Some(first.without_content()))
    );
    assert_eq!(
        p.store.email_by_message_id(&second.message_id).await,
        Ok(Some(second.without_content()))
    );
    assert_eq!(p.store.email_by_provider_id(&unique()).await, Ok(None));
    assert_eq!(p.store.email_by_message_id(&unique()).await, Ok(None));

    let moved = format!("prov-{}", unique());
    let mut updated = first.clone();
    updated.provider_message_id = Some(moved.clone());
    commit(
        p.store.as_ref(),
        "update",
        vec![Write::UpdateEmail(updated.clone())],
    )
    .await;
    assert_eq!(p.store.email_by_provider_id(&provider).await, Ok(None));
    assert_eq!(
        p.store.email_by_provider_id(&moved).await,
        Ok(Some(updated.without_content()))
    );
}

/// An email is found by its id alone, whichever workspace holds it, without its content;
/// unknown ids find nothing.
pub async fn emails_found_by_id_in_any_workspace(p: &StorePorts) {
    let now = now_ms();
    let a = workspace(p, "by-id-a").await;
    let b = workspace(p, "by-id-b").await;
    let ca = insert_contact(p, &a.id, "ia", true, now).await;
    let cb = insert_contact(p, &b.id, "ib", true, now).await;
    let first = email_record(&ca, now);
    let second = email_record(&cb, now);
    commit(
        p.store.as_ref(),
        "insert",
        vec![
            Write::InsertEmail(first.clone()),
            Write::InsertEmail(second.clone()),
        ],
    )
    .await;
    assert_eq!(
        p.store.email_by_id(&first.id).await,
        Ok(Some(first.without_content()))
    );
    assert_eq!(
        p.store.email_by_id(&second.id).await,
        Ok(Some(second.without_content()))
    );
    assert_eq!(
        p.store.email_by_id(&EmailId::from(unique())).await,
        Ok(None)
    );
}

/// Outcome counts cover sent emails only, by first open and click, permanent bounces,
/// within the sent-since window and the campaign asked for.
pub async fn email_stats_count_outcomes(p: &StorePorts) {
    let ws = workspace(p, "stats").await;
    let now = now_ms();
    let campaign_id = CampaignId::from(unique());
    let mut writes = Vec::new();
    // (contact tag, sent seconds before now, in campaign, lifecycle)
    let specs: Vec<(&str, Option<i64>, bool, EmailLifecycle)> = vec![
        ("queued", None, true, EmailLifecycle::default()),
        ("sent", Some(10), true, EmailLifecycle::default()),
        (
            "delivered",
            Some(10),
            true,
            EmailLifecycle {
                delivered_at: Some(now),
                ..Default::default()
            },
        ),
        (
            "opened",
            Some(10),
            true,
            EmailLifecycle {
                opened_at: Some(now),
                opens: 3,
                ..Default::default()
            },
        ),
        (
            "clicked",
            Some(10),
            false,
            EmailLifecycle {
                clicked_at: Some(now),
                clicks: 1,
                ..Default::default()
            },
        ),
        (
            "transient",
            Some(10),
            false,
            EmailLifecycle {
                bounced_at: Some(now),
                bounce_type: Some(BounceType::Transient),
                ..Default::default()
            },
        ),
        (
            "bounced",
            Some(100),
            false,
            EmailLifecycle {
                bounced_at: Some(now),
                bounce_type: Some(BounceType::Permanent),
                ..Default::default()
            },
        ),
        (
            "complained",
            Some(100),
            true,
            EmailLifecycle {
                complained_at: Some(now),
                ..Default::default()
            },
        ),
    ];
    for (tag, sent, in_campaign, lifecycle) in specs {
        let contact = insert_contact(p, &ws.id, tag, true, now).await;
        let mut email = if in_campaign {
            campaign_email(&contact, &campaign_id, now)
        } else {
            email_record(&contact, now)
        };
        email.sent_at = sent.map(|s| secs(now, -s));
        email.lifecycle = lifecycle;
        writes.push(Write::InsertEmail(email));
    }
    commit(p.store.as_ref(), "insert emails", writes).await;

    let all = p
        .store
        .email_stats(&ws.id, &EmailStatsQuery::default())
        .await;
    let expected = EmailStats {
        sent: 7,
        delivered: 4,
        opened: 2,
        clicked: 1,
        bounced: 1,
        complained: 1,
    };
    assert_eq!(all, Ok(expected));

    let recent = EmailStatsQuery {
        campaign_id: None,
        sent_since: Some(secs(now, -50)),
    };
    let expected = EmailStats {
        sent: 5,
        delivered: 3,
        opened: 2,
        clicked: 1,
        bounced: 0,
        complained: 0,
    };
    assert_eq!(p.store.email_stats(&ws.id, &recent).await, Ok(expected));

    let of_campaign = EmailStatsQuery {
        campaign_id: Some(campaign_id),
        sent_since: None,
    };
    let expected = EmailStats {
        sent: 4,
        delivered: 3,
        opened: 1,
        clicked: 0,
        bounced: 0,
        complained: 1,
    };
    assert_eq!(
        p.store.email_stats(&ws.id, &of_campaign).await,
        Ok(expected)
    );

    let other = workspace(p, "stats-other").await;
    let none = p
        .store
        .email_stats(&other.id, &EmailStatsQuery::default())
        .await;
    assert_eq!(none, Ok(EmailStats::default()));
}

/// A deployment secret is stored by the first caller; later callers get that value.
pub async fn deployment_secret_created_once(p: &StorePorts) {
    let name = format!("test-{}", unique());
    let first = p.store.ensure_secret(&name, b"first-value").await;
    assert_eq!(first, Ok(b"first-value".to_vec()));
    let again = p.store.ensure_secret(&name, b"second-value").await;
    assert_eq!(again, Ok(b"first-value".to_vec()));
    let other = p.store.ensure_secret(&format!("{name}-b"), b"other").await;
    assert_eq!(other, Ok(b"other".to_vec()));
}
