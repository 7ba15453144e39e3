//! Campaigns, their emails (one per contact) and the per-status email counts.

use posthorn_core::model::{AudienceType, Campaign, CampaignStatus, EmailCounts, EmailStatus};
use posthorn_core::ports::Write;

use crate::fixtures::{
    campaign, campaign_email, commit, commit_conflicts, contact, email_record, event,
    insert_contact, now_ms, plan_is_pro, secs, workspace,
};
use crate::StorePorts;

/// Stores `campaign` and returns it as stored (version 0).
async fn insert_campaign(p: &StorePorts, mut campaign: Campaign) -> Campaign {
    commit(
        p.store.as_ref(),
        "inserting a campaign",
        vec![Write::InsertCampaign(campaign.clone())],
    )
    .await;
    campaign.version = 0;
    campaign
}

/// A campaign reads back as inserted with version 0; updates are guarded by the version
/// and bump it; a second insert of the id, a stale update and an update of a missing
/// campaign conflict; deleting leaves the campaign's emails.
pub async fn campaign_insert_update_get_delete(p: &StorePorts) {
    let ws = workspace(p, "campaigns").await;
    let now = now_ms();
    let s = p.store.as_ref();
    let mut new = campaign(&ws.id, "launch", now);
    new.version = 5; // the store must ignore it and store 0
    let stored = insert_campaign(p, new).await;
    assert_eq!(
        s.campaign(&ws.id, &stored.id).await,
        Ok(Some(stored.clone())),
        "campaign differs"
    );
    assert_eq!(
        s.campaign(&ws.id, &crate::fixtures::fresh_id()).await,
        Ok(None),
        "an unknown campaign id must read as None"
    );
    let mut again = stored.clone();
    again.name = "duplicate".into();
    commit_conflicts(
        s,
        "inserting the same campaign id again",
        vec![Write::InsertCampaign(again)],
    )
    .await;
    assert_eq!(
        s.campaign(&ws.id, &stored.id).await,
        Ok(Some(stored.clone()))
    );

    let target = insert_contact(p, &ws.id, "target", true, now).await;
    let mut changed = stored.clone();
    changed.name = "launch v2".into();
    changed.description = Some("described".into());
    changed.reply_to = Some("reply@example.com".into());
    changed.audience_type = AudienceType::Filtered;
    changed.audience_condition = Some(plan_is_pro());
    changed.status = CampaignStatus::Sending;
    changed.scheduled_for = Some(secs(now, 60));
    changed.sent_at = Some(secs(now, 61));
    changed.total_recipients = 42;
    changed.audience_until_id = Some(target.id.clone());
    changed.expanded_through_id = Some(target.id.clone());
    changed.expansion_done = true;
    changed.updated_at = secs(now, 62);
    commit(
        s,
        "updating the campaign",
        vec![Write::UpdateCampaign(changed.clone())],
    )
    .await;
    changed.version = 1;
    assert_eq!(
        s.campaign(&ws.id, &stored.id).await,
        Ok(Some(changed.clone())),
        "the update must store every field and bump the version"
    );

    let mut stale = stored.clone();
    stale.name = "stale".into();
    commit_conflicts(
        s,
        "an update with a stale version",
        vec![Write::UpdateCampaign(stale)],
    )
    .await;
    let mut twice = changed.clone();
    twice.name = "twice".into();
    let mut thrice = twice.clone();
    thrice.version = 2;
    thrice.name = "thrice".into();
    commit(
        s,
        "two updates in one change set",
        vec![
            Write::UpdateCampaign(twice),
            Write::UpdateCampaign(thrice.clone()),
        ],
    )
    .await;
    thrice.version = 3;
    assert_eq!(
        s.campaign(&ws.id, &stored.id).await,
        Ok(Some(thrice.clone()))
    );

    let missing = campaign(&ws.id, "missing", now);
    commit_conflicts(
        s,
        "updating a missing campaign",
        vec![Write::UpdateCampaign(missing.clone())],
    )
    .await;
    assert_eq!(
        s.campaign(&ws.id, &missing.id).await,
        Ok(None),
        "an update must not insert"
    );

    let mail = campaign_email(&target, &stored.id, now);
    commit(
        s,
        "a campaign email",
        vec![Write::InsertEmail(mail.clone())],
    )
    .await;
    let delete = Write::DeleteCampaign {
        workspace_id: ws.id.clone(),
        id: stored.id.clone(),
    };
    commit(s, "deleting the campaign", vec![delete.clone()]).await;
    assert_eq!(
        s.campaign(&ws.id, &stored.id).await,
        Ok(None),
        "deleted campaign still readable"
    );
    assert_eq!(s.campaigns(&ws.id, None, 0, 10).await, Ok((vec![], 0)));
    assert_eq!(
        s.email(&ws.id, &mail.id).await,
        Ok(Some(mail)),
        "the campaign's emails must stay"
    );
    commit(s, "deleting an absent campaign", vec![delete]).await;
}

/// Campaigns list newest first, optionally of one status, with the matching total.
pub async fn campaigns_listed_newest_first_by_status(p: &StorePorts) {
    let ws = workspace(p, "campaign-list").await;
    let now = now_ms();
    let s = p.store.as_ref();
    let with_status = |name: &str, at, status| {
        let mut c = campaign(&ws.id, name, at);
        c.status = status;
        c
    };
    let a = insert_campaign(p, with_status("a", now, CampaignStatus::Draft)).await;
    let b = insert_campaign(p, with_status("b", secs(now, 10), CampaignStatus::Sent)).await;
    let c = insert_campaign(p, with_status("c", secs(now, 20), CampaignStatus::Draft)).await;
    let d = insert_campaign(
        p,
        with_status("d", secs(now, 30), CampaignStatus::Scheduled),
    )
    .await;

    assert_eq!(
        s.campaigns(&ws.id, None, 0, 10).await,
        Ok((vec![d.clone(), c.clone(), b.clone(), a.clone()], 4)),
        "campaigns newest first with the total"
    );
    assert_eq!(
        s.campaigns(&ws.id, None, 1, 2).await,
        Ok((vec![c.clone(), b.clone()], 4))
    );
    assert_eq!(s.campaigns(&ws.id, None, 4, 2).await, Ok((vec![], 4)));
    assert_eq!(
        s.campaigns(&ws.id, Some(CampaignStatus::Draft), 0, 10)
            .await,
        Ok((vec![c.clone(), a.clone()], 2)),
        "status filter"
    );
    assert_eq!(
        s.campaigns(&ws.id, Some(CampaignStatus::Draft), 1, 1).await,
        Ok((vec![a.clone()], 2))
    );
    assert_eq!(
        s.campaigns(&ws.id, Some(CampaignStatus::Cancelled), 0, 10)
            .await,
        Ok((vec![], 0))
    );

    let mut scheduled = a.clone();
    scheduled.status = CampaignStatus::Scheduled;
    commit(
        s,
        "scheduling a",
        vec![Write::UpdateCampaign(scheduled.clone())],
    )
    .await;
    scheduled.version = 1;
    assert_eq!(
        s.campaigns(&ws.id, Some(CampaignStatus::Draft), 0, 10)
            .await,
        Ok((vec![c.clone()], 1)),
        "a changed status must leave the old status's list"
    );
    assert_eq!(
        s.campaigns(&ws.id, Some(CampaignStatus::Scheduled), 0, 10)
            .await,
        Ok((vec![d.clone(), scheduled.clone()], 2))
    );
    assert_eq!(
        s.campaigns(&ws.id, None, 0, 10).await.map(|(_, n)| n),
        Ok(4)
    );
}

/// A second email of one campaign to one contact conflicts and applies nothing of its
/// change set; other campaigns and transactional emails (no campaign) are not limited.
pub async fn campaign_email_unique_per_contact(p: &StorePorts) {
    let ws = workspace(p, "campaign-unique").await;
    let now = now_ms();
    let s = p.store.as_ref();
    let k = insert_campaign(p, campaign(&ws.id, "unique", now)).await;
    let other_campaign = insert_campaign(p, campaign(&ws.id, "other", now)).await;
    let c = insert_contact(p, &ws.id, "unique", true, now).await;
    let d = insert_contact(p, &ws.id, "second", true, now).await;
    let first = campaign_email(&c, &k.id, now);
    commit(
        s,
        "the first campaign email",
        vec![Write::InsertEmail(first.clone())],
    )
    .await;

    let fresh = contact(&ws.id, "fresh", true, now);
    let to_d = campaign_email(&d, &k.id, now);
    let duplicate = campaign_email(&c, &k.id, secs(now, 1));
    commit_conflicts(
        s,
        "a second email of the campaign to the same contact",
        vec![
            Write::InsertContact(fresh.clone()),
            Write::AppendEvent(event(&ws.id, "campaign.expanded", Some(&c.id), now)),
            Write::InsertEmail(to_d.clone()),
            Write::InsertEmail(duplicate.clone()),
        ],
    )
    .await;
    assert_eq!(
        s.email(&ws.id, &duplicate.id).await,
        Ok(None),
        "duplicate stored"
    );
    assert_eq!(
        s.email(&ws.id, &to_d.id).await,
        Ok(None),
        "email of the failed change set stored"
    );
    assert_eq!(
        s.contact(&ws.id, &fresh.id).await,
        Ok(None),
        "contact of the failed change set stored"
    );
    assert_eq!(
        s.event_names(&ws.id).await,
        Ok(vec![]),
        "event of the failed change set stored"
    );
    assert_eq!(
        s.campaign_email_counts(&ws.id, &k.id).await,
        Ok(EmailCounts {
            queued: 1,
            ..Default::default()
        }),
        "counts must not include emails of a failed change set"
    );

    let transactional_1 = email_record(&c, now);
    let transactional_2 = email_record(&c, now);
    commit(
        s,
        "two transactional emails to one contact, another campaign's and another contact's",
        vec![
            Write::InsertEmail(transactional_1.clone()),
            Write::InsertEmail(transactional_2.clone()),
            Write::InsertEmail(campaign_email(&c, &other_campaign.id, now)),
            Write::InsertEmail(to_d.clone()),
        ],
    )
    .await;
    assert_eq!(
        s.email(&ws.id, &transactional_2.id).await,
        Ok(Some(transactional_2))
    );
    assert_eq!(
        s.campaign_email_counts(&ws.id, &k.id)
            .await
            .map(|n| n.queued),
        Ok(2)
    );
    assert_eq!(
        s.campaign_email_counts(&ws.id, &other_campaign.id)
            .await
            .map(|n| n.queued),
        Ok(1)
    );

    // Updating a campaign email (same campaign and contact) is no duplicate.
    let mut sent = first.clone();
    sent.status = EmailStatus::Sent;
    commit(
        s,
        "updating the first email",
        vec![Write::UpdateEmail(sent)],
    )
    .await;
}

/// `campaign_email_counts` follows inserts and status updates, and failed change sets
/// leave it as it was.
pub async fn campaign_email_counts_follow_status(p: &StorePorts) {
    let ws = workspace(p, "campaign-counts").await;
    let now = now_ms();
    let s = p.store.as_ref();
    let k = insert_campaign(p, campaign(&ws.id, "counted", now)).await;
    let other = insert_campaign(p, campaign(&ws.id, "other", now)).await;
    assert_eq!(
        s.campaign_email_counts(&ws.id, &k.id).await,
        Ok(EmailCounts::default())
    );
    assert_eq!(
        s.campaign_email_counts(&ws.id, &crate::fixtures::fresh_id())
            .await,
        Ok(EmailCounts::default())
    );

    let mut emails = Vec::new();
    for i in 0..5 {
        let c = insert_contact(p, &ws.id, &format!("counted{i}"), true, now).await;
        emails.push(campaign_email(&c, &k.id, now));
    }
    let bystander = insert_contact(p, &ws.id, "bystander", true, now).await;
    let mut writes: Vec<Write> = emails.iter().cloned().map(Write::InsertEmail).collect();
    writes.push(Write::InsertEmail(email_record(&bystander, now)));
    writes.push(Write::InsertEmail(campaign_email(
        &bystander, &other.id, now,
    )));
    commit(s, "campaign emails", writes).await;
    assert_eq!(
        s.campaign_email_counts(&ws.id, &k.id).await,
        Ok(EmailCounts {
            queued: 5,
            ..Default::default()
        })
    );

    let with = |i: usize, status: EmailStatus| {
        let mut e = emails[i].clone();
        e.status = status;
        e.updated_at = secs(now, 1);
        e
    };
    commit(
        s,
        "status updates",
        vec![
            Write::UpdateEmail(with(0, EmailStatus::Sent)),
            Write::UpdateEmail(with(1, EmailStatus::Sent)),
            Write::UpdateEmail(with(2, EmailStatus::Sent)),
            Write::UpdateEmail(with(2, EmailStatus::Delivered)),
            Write::UpdateEmail(with(3, EmailStatus::Failed)),
        ],
    )
    .await;
    let expected = EmailCounts {
        queued: 1,
        sent: 2,
        delivered: 1,
        failed: 1,
        ..Default::default()
    };
    assert_eq!(s.campaign_email_counts(&ws.id, &k.id).await, Ok(expected));

    commit_conflicts(
        s,
        "status updates, then an update of a missing email",
        vec![
            Write::UpdateEmail(with(0, EmailStatus::Opened)),
            Write::UpdateEmail(with(4, EmailStatus::Cancelled)),
            Write::UpdateEmail(campaign_email(&bystander, &k.id, now)),
        ],
    )
    .await;
    assert_eq!(
        s.campaign_email_counts(&ws.id, &k.id).await,
        Ok(expected),
        "counts must be as before a failed change set"
    );

    commit(
        s,
        "more updates",
        vec![
            Write::UpdateEmail(with(0, EmailStatus::Clicked)),
            Write::UpdateEmail(with(1, EmailStatus::Bounced)),
            Write::UpdateEmail(with(4, EmailStatus::Cancelled)),
        ],
    )
    .await;
    assert_eq!(
        s.campaign_email_counts(&ws.id, &k.id).await,
        Ok(EmailCounts {
            clicked: 1,
            bounced: 1,
            delivered: 1,
            failed: 1,
            cancelled: 1,
            ..Default::default()
        })
    );
    assert_eq!(
        s.campaign_email_counts(&ws.id, &other.id).await,
        Ok(EmailCounts {
            queued: 1,
            ..Default::default()
        })
    );
}
