//! Commits: all or nothing, in order.

use std::collections::HashSet;
use std::time::Duration;

use posthorn_core::model::{
    CampaignStatus, EmailCounts, EmailStatus, NewKeySet, SegmentType, TemplateType, Workspace,
};
use posthorn_core::ports::{ContactQuery, EventQuery, JobStats, TemplateQuery, Write};
use serde_json::{json, Value};

use crate::fixtures::{
    add_member, campaign, campaign_email, commit, commit_conflicts, contact, domain, email_record,
    event, insert_contact, job, must_read_contact, now_ms, object, remove_member, secs, segment,
    template, unique, workspace,
};
use crate::StorePorts;

/// A change set whose last write conflicts leaves nothing: no workspace, no contact, no
/// event, no job.
pub async fn commit_is_all_or_nothing(p: &StorePorts) {
    let ws = workspace(p, "atomic").await;
    let now = now_ms();
    let existing = insert_contact(p, &ws.id, "existing", true, now).await;

    let other = Workspace::new(
        crate::fixtures::ids(),
        format!("atomic-other-{}", unique()),
        now,
    );
    let fresh = contact(&ws.id, "fresh", true, now);
    let mut clash = contact(&ws.id, "clash", true, now);
    clash.email = existing.email.clone();
    commit_conflicts(
        p.store.as_ref(),
        "a change set whose last write conflicts",
        vec![
            Write::PutWorkspace(other.clone()),
            Write::InsertContact(fresh.clone()),
            Write::AppendEvent(event(&ws.id, "contact.created", Some(&fresh.id), now)),
            Write::EnqueueJob(job(&ws.id, now)),
            Write::InsertContact(clash),
        ],
    )
    .await;

    assert_eq!(
        p.store.workspace(&other.id).await,
        Ok(None),
        "workspace was applied"
    );
    assert_eq!(
        p.store.contact(&ws.id, &fresh.id).await,
        Ok(None),
        "contact was applied"
    );
    let events = p
        .store
        .events(
            &ws.id,
            &EventQuery {
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .expect("events failed");
    assert!(events.is_empty(), "event was applied: {events:?}");
    assert_eq!(p.store.event_names(&ws.id).await, Ok(vec![]));
    let claimed = p
        .jobs
        .claim(secs(now, 3600), Duration::from_secs(30), 10)
        .await
        .expect("claim failed");
    assert!(
        claimed.is_empty(),
        "job of a failed commit was enqueued: {claimed:?}"
    );
    assert_eq!(p.jobs.stats(now).await, Ok(JobStats::default()));
    assert_eq!(
        p.store
            .count_contacts(&ws.id, &ContactQuery::default())
            .await,
        Ok(1)
    );
}

/// Records of every kind written before a conflicting write are rolled back.
pub async fn commit_rollback_covers_every_record_kind(p: &StorePorts) {
    let ws = workspace(p, "rollback").await;
    let now = now_ms();
    let stale = insert_contact(p, &ws.id, "stale", true, now).await;
    let mut bumped = stale.clone();
    bumped.subscribed = false;
    commit(p.store.as_ref(), "bump", vec![Write::UpdateContact(bumped)]).await;

    let other_ws = Workspace::new(crate::fixtures::ids(), format!("other-{}", unique()), now);
    let keys = NewKeySet::generate(
        crate::fixtures::ids(),
        &ws.id,
        Some("k".into()),
        vec![],
        now,
    );
    let dom = domain(&ws.id, &format!("{}.example.org", unique()), now);
    let tpl = template(&ws.id, "welcome", "Hi", TemplateType::Transactional, now);
    let fresh = contact(&ws.id, "fresh", true, now);
    let mail = email_record(&fresh, now);
    commit_conflicts(
        p.store.as_ref(),
        "a change set with a stale update at the end",
        vec![
            Write::PutWorkspace(other_ws.clone()),
            Write::PutKeySet(keys.record.clone()),
            Write::InsertDomain(dom),
            Write::PutTemplate(tpl.clone()),
            Write::InsertContact(fresh.clone()),
            Write::InsertEmail(mail.clone()),
            Write::AppendEvent(event(&ws.id, "x", None, now)),
            Write::EnqueueJob(job(&ws.id, now)),
            Write::DeleteContact {
                workspace_id: ws.id.clone(),
                id: stale.id.clone(),
            },
            Write::UpdateContact(stale.clone()),
        ],
    )
    .await;

    let s = p.store.as_ref();
    assert_eq!(
        s.workspace(&other_ws.id).await,
        Ok(None),
        "workspace was applied"
    );
    assert_eq!(s.key_sets(&ws.id).await, Ok(vec![]), "key set was applied");
    assert_eq!(s.key_by_hash(&keys.record.secret_key_hash).await, Ok(None));
    assert_eq!(s.domains(&ws.id).await, Ok(vec![]), "domain was applied");
    assert_eq!(
        s.template(&ws.id, &tpl.id).await,
        Ok(None),
        "template was applied"
    );
    let (templates, total) = s
        .templates(
            &ws.id,
            &TemplateQuery {
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .expect("templates failed");
    assert!(templates.is_empty() && total == 0);
    assert_eq!(
        s.contact(&ws.id, &fresh.id).await,
        Ok(None),
        "contact was applied"
    );
    assert_eq!(
        s.email(&ws.id, &mail.id).await,
        Ok(None),
        "email was applied"
    );
    assert_eq!(s.event_names(&ws.id).await, Ok(vec![]), "event was applied");
    let kept = must_read_contact(s, &ws.id, &stale.id).await;
    assert_eq!(
        kept.version, 1,
        "the deleted-then-restored contact must be as before"
    );
    assert!(!kept.subscribed);
    assert_eq!(
        p.jobs.stats(now).await,
        Ok(JobStats::default()),
        "job was enqueued"
    );
}

/// Records replaced or deleted by a failed change set come back as they were.
pub async fn commit_rollback_restores_replaced_records(p: &StorePorts) {
    let ws = workspace(p, "restore").await;
    let now = now_ms();
    let tpl = template(&ws.id, "original", "Original", TemplateType::Marketing, now);
    let keys = NewKeySet::generate(crate::fixtures::ids(), &ws.id, None, vec![], now);
    let dom = domain(&ws.id, &format!("{}.example.org", unique()), now);
    let mut c = contact(&ws.id, "restore", true, now);
    c.data = object(json!({"keep": true}));
    let mail = email_record(&c, now);
    commit(
        p.store.as_ref(),
        "setup",
        vec![
            Write::PutTemplate(tpl.clone()),
            Write::PutKeySet(keys.record.clone()),
            Write::InsertDomain(dom.clone()),
            Write::InsertContact(c.clone()),
            Write::InsertEmail(mail.clone()),
        ],
    )
    .await;

    let mut renamed_ws = ws.clone();
    renamed_ws.name = "renamed".into();
    let mut tpl2 = tpl.clone();
    tpl2.name = "changed".into();
    let mut dom2 = dom.clone();
    dom2.verified = true;
    let mut c2 = c.clone();
    c2.email = crate::fixtures::email("changed");
    c2.data = object(json!({"keep": false}));
    let mut mail2 = mail.clone();
    mail2.status = EmailStatus::Sent;
    commit_conflicts(
        p.store.as_ref(),
        "replacing everything, then a conflicting insert",
        vec![
            Write::PutWorkspace(renamed_ws),
            Write::PutTemplate(tpl2),
            Write::DeleteKeySet {
                workspace_id: ws.id.clone(),
                id: keys.record.id.clone(),
            },
            Write::UpdateDomain(dom2),
            Write::UpdateContact(c2.clone()),
            Write::UpdateEmail(mail2),
            Write::DeleteTemplate {
                workspace_id: ws.id.clone(),
                id: tpl.id.clone(),
            },
            Write::InsertEmail(mail.clone()),
        ],
    )
    .await;

    let s = p.store.as_ref();
    assert_eq!(
        s.workspace(&ws.id).await,
        Ok(Some(ws.clone())),
        "workspace not restored"
    );
    assert_eq!(
        s.template(&ws.id, &tpl.id).await,
        Ok(Some(tpl)),
        "template not restored"
    );
    assert_eq!(
        s.key_sets(&ws.id).await,
        Ok(vec![keys.record.clone()]),
        "key set not restored"
    );
    let found = s
        .key_by_hash(&keys.record.public_key_hash)
        .await
        .expect("key_by_hash failed");
    assert_eq!(
        found.map(|k| k.key_set),
        Some(keys.record),
        "key hash index not restored"
    );
    assert_eq!(
        s.domains(&ws.id).await,
        Ok(vec![dom]),
        "domain not restored"
    );
    assert_eq!(
        must_read_contact(s, &ws.id, &c.id).await,
        c,
        "contact not restored"
    );
    assert_eq!(
        s.contact_by_email(&ws.id, c2.email.as_str()).await,
        Ok(None)
    );
    let by_email = s.contact_by_email(&ws.id, c.email.as_str()).await;
    assert_eq!(by_email, Ok(Some(c)), "email index not restored");
    assert_eq!(
        s.email(&ws.id, &mail.id).await,
        Ok(Some(mail)),
        "email not restored"
    );
}

/// Writes apply in order: a contact inserted and then updated in one set ends updated;
/// an update placed before the insert conflicts.
pub async fn commit_applies_writes_in_order(p: &StorePorts) {
    let ws = workspace(p, "order").await;
    let now = now_ms();
    let c = contact(&ws.id, "order", true, now);
    let mut updated = c.clone();
    updated.data = object(json!({"step": 2}));
    let mut updated_again = updated.clone();
    updated_again.version = 1;
    updated_again.data = object(json!({"step": 3}));
    commit(
        p.store.as_ref(),
        "insert then two updates",
        vec![
            Write::InsertContact(c.clone()),
            Write::UpdateContact(updated),
            Write::UpdateContact(updated_again),
        ],
    )
    .await;
    let stored = must_read_contact(p.store.as_ref(), &ws.id, &c.id).await;
    assert_eq!(
        stored.version, 2,
        "two updates in one set must bump the version twice"
    );
    assert_eq!(stored.data.get("step"), Some(&Value::from(3)));

    let d = contact(&ws.id, "transient", true, now);
    commit(
        p.store.as_ref(),
        "insert then delete",
        vec![
            Write::InsertContact(d.clone()),
            Write::DeleteContact {
                workspace_id: ws.id.clone(),
                id: d.id.clone(),
            },
        ],
    )
    .await;
    assert_eq!(
        p.store.contact(&ws.id, &d.id).await,
        Ok(None),
        "insert-then-delete left it"
    );

    let e = contact(&ws.id, "reversed", true, now);
    commit_conflicts(
        p.store.as_ref(),
        "update before insert",
        vec![
            Write::UpdateContact(e.clone()),
            Write::InsertContact(e.clone()),
        ],
    )
    .await;
    assert_eq!(p.store.contact(&ws.id, &e.id).await, Ok(None));

    // Later events of one set come out first (newest first), earlier ones after.
    let first = event(&ws.id, "first", None, secs(now, 1));
    let second = event(&ws.id, "second", None, secs(now, 2));
    commit(
        p.store.as_ref(),
        "two events",
        vec![
            Write::AppendEvent(first.clone()),
            Write::AppendEvent(second.clone()),
        ],
    )
    .await;
    let events = p
        .store
        .events(
            &ws.id,
            &EventQuery {
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .expect("events failed");
    assert_eq!(events, vec![second, first]);
}

/// An empty change set commits and changes nothing.
pub async fn commit_empty_change_set(p: &StorePorts) {
    let ws = workspace(p, "empty").await;
    commit(p.store.as_ref(), "empty change set", vec![]).await;
    assert_eq!(p.store.workspace(&ws.id).await, Ok(Some(ws)));
    assert_eq!(p.jobs.stats(now_ms()).await, Ok(JobStats::default()));
}

/// Segment, membership and campaign writes of a failed change set are rolled back.
pub async fn commit_rollback_covers_segments_and_campaigns(p: &StorePorts) {
    let ws = workspace(p, "rollback-segments").await;
    let now = now_ms();
    let s = p.store.as_ref();
    let member = insert_contact(p, &ws.id, "member", true, now).await;
    let outsider = insert_contact(p, &ws.id, "outsider", true, now).await;
    let seg = segment(&ws.id, "kept", SegmentType::Dynamic, true, now);
    let kept = campaign(&ws.id, "kept", now);
    let mail = campaign_email(&member, &kept.id, now);
    commit(
        s,
        "setup",
        vec![
            Write::PutSegment(seg.clone()),
            add_member(&ws.id, &seg.id, &member.id),
            Write::InsertCampaign(kept.clone()),
            Write::InsertEmail(mail.clone()),
        ],
    )
    .await;

    let fresh_seg = segment(&ws.id, "fresh", SegmentType::Static, false, secs(now, 1));
    let mut renamed_seg = seg.clone();
    renamed_seg.name = "renamed".into();
    let fresh_campaign = campaign(&ws.id, "fresh", secs(now, 1));
    let mut changed = kept.clone();
    changed.status = CampaignStatus::Sending;
    let mut sent = mail.clone();
    sent.status = EmailStatus::Sent;
    commit_conflicts(
        s,
        "segment and campaign writes, then a duplicate campaign",
        vec![
            Write::PutSegment(fresh_seg.clone()),
            add_member(&ws.id, &fresh_seg.id, &member.id),
            add_member(&ws.id, &seg.id, &outsider.id),
            Write::PutSegment(renamed_seg),
            remove_member(&ws.id, &seg.id, &member.id),
            Write::DeleteSegment {
                workspace_id: ws.id.clone(),
                id: seg.id.clone(),
            },
            Write::InsertCampaign(fresh_campaign.clone()),
            Write::InsertEmail(campaign_email(&outsider, &kept.id, now)),
            Write::UpdateEmail(sent),
            Write::UpdateCampaign(changed),
            Write::DeleteCampaign {
                workspace_id: ws.id.clone(),
                id: kept.id.clone(),
            },
            Write::InsertCampaign(fresh_campaign.clone()),
        ],
    )
    .await;

    assert_eq!(
        s.segment(&ws.id, &fresh_seg.id).await,
        Ok(None),
        "segment was applied"
    );
    assert_eq!(
        s.segment(&ws.id, &seg.id).await,
        Ok(Some(seg.clone())),
        "segment not restored"
    );
    assert_eq!(s.segments(&ws.id, 0, 10).await, Ok((vec![seg.clone()], 1)));
    assert_eq!(s.tracked_segments(&ws.id).await, Ok(vec![seg.clone()]));
    assert_eq!(
        s.segment_member_ids(&ws.id, &seg.id, None, 10).await,
        Ok(vec![member.id.clone()]),
        "members not restored"
    );
    assert_eq!(s.segment_member_count(&ws.id, &fresh_seg.id).await, Ok(0));
    assert_eq!(
        s.memberships(&ws.id, &member.id).await,
        Ok(HashSet::from([seg.id.clone()])),
        "memberships not restored"
    );
    assert_eq!(
        s.memberships(&ws.id, &outsider.id).await,
        Ok(HashSet::new())
    );
    assert_eq!(
        s.campaign(&ws.id, &fresh_campaign.id).await,
        Ok(None),
        "campaign was applied"
    );
    assert_eq!(
        s.campaign(&ws.id, &kept.id).await,
        Ok(Some(kept.clone())),
        "campaign not restored"
    );
    assert_eq!(
        s.campaigns(&ws.id, Some(CampaignStatus::Draft), 0, 10)
            .await,
        Ok((vec![kept.clone()], 1))
    );
    assert_eq!(
        s.campaigns(&ws.id, Some(CampaignStatus::Sending), 0, 10)
            .await,
        Ok((vec![], 0))
    );
    assert_eq!(
        s.email(&ws.id, &mail.id).await,
        Ok(Some(mail)),
        "email not restored"
    );
    assert_eq!(
        s.campaign_email_counts(&ws.id, &kept.id).await,
        Ok(EmailCounts {
            queued: 1,
            ..Default::default()
        }),
        "campaign counts not restored"
    );
    // The outsider has no email of the campaign: a new one is no duplicate.
    commit(
        s,
        "an email to the outsider",
        vec![Write::InsertEmail(campaign_email(&outsider, &kept.id, now))],
    )
    .await;
}
