//! Workspace isolation: no read reveals another workspace's records.

use std::collections::HashSet;

use posthorn_core::model::{EmailCounts, NewKeySet, SegmentType, TemplateType};
use posthorn_core::ports::{ContactQuery, EventQuery, MatchQuery, TemplateQuery, Write};
use serde_json::json;

use crate::fixtures::{
    add_member, campaign, campaign_email, commit, commit_conflicts, condition, contact, domain,
    email_record, event, now_ms, object, plan_is_pro, remove_member, segment, template, unique,
    workspace,
};
use crate::StorePorts;

/// Every read with another workspace's id returns `None` or nothing for the first
/// workspace's records, and the same email may exist in both.
pub async fn isolation_between_workspaces(p: &StorePorts) {
    let a = workspace(p, "owner").await;
    let b = workspace(p, "stranger").await;
    let now = now_ms();

    let keys = NewKeySet::generate(crate::fixtures::ids(), &a.id, None, vec![], now);
    let dom = domain(&a.id, &format!("{}.example.org", unique()), now);
    let mut pending = contact(&a.id, "pending", true, now);
    pending.status = posthorn_core::model::ContactStatus::Pending;
    pending.expires_at = Some(now);
    let active = contact(&a.id, "active", true, now);
    let tpl = template(&a.id, "secret", "Secret", TemplateType::Marketing, now);
    let mail = email_record(&active, now);
    let ev = event(&a.id, "signup", Some(&active.id), now);
    commit(
        p.store.as_ref(),
        "records of workspace A",
        vec![
            Write::PutKeySet(keys.record.clone()),
            Write::InsertDomain(dom),
            Write::InsertContact(active.clone()),
            Write::InsertContact(pending.clone()),
            Write::PutTemplate(tpl.clone()),
            Write::InsertEmail(mail.clone()),
            Write::AppendEvent(ev),
        ],
    )
    .await;

    let s = p.store.as_ref();
    let everything = ContactQuery {
        limit: 100,
        ..Default::default()
    };
    let searched = ContactQuery {
        search: Some("example".into()),
        limit: 100,
        ..Default::default()
    };
    let subscribed = ContactQuery {
        subscribed: Some(true),
        limit: 100,
        ..Default::default()
    };
    // A sanity check that A sees its own records, so the checks below mean something.
    assert_eq!(s.count_contacts(&a.id, &everything).await, Ok(2));

    assert_eq!(s.key_sets(&b.id).await, Ok(vec![]), "key sets leak");
    assert_eq!(s.domains(&b.id).await, Ok(vec![]), "domains leak");
    assert_eq!(
        s.contact(&b.id, &active.id).await,
        Ok(None),
        "contact by id leaks"
    );
    assert_eq!(
        s.contact_by_email(&b.id, active.email.as_str()).await,
        Ok(None),
        "contact by email leaks"
    );
    for query in [&everything, &searched, &subscribed] {
        let page = s.contacts(&b.id, query).await.expect("contacts failed");
        assert!(
            page.contacts.is_empty() && !page.has_more,
            "contact listing leaks: {query:?}"
        );
        assert_eq!(
            s.count_contacts(&b.id, query).await,
            Ok(0),
            "contact count leaks"
        );
    }
    assert_eq!(
        s.count_active_contacts(&b.id).await,
        Ok(0),
        "active count leaks"
    );
    assert_eq!(
        s.pending_contacts(&b.id, 100).await,
        Ok(vec![]),
        "pending contacts leak"
    );
    assert_eq!(s.template(&b.id, &tpl.id).await, Ok(None), "template leaks");
    let templates = s
        .templates(
            &b.id,
            &TemplateQuery {
                limit: 100,
                ..Default::default()
            },
        )
        .await
        .expect("templates failed");
    assert_eq!(templates, (vec![], 0), "template listing leaks");
    assert_eq!(s.email(&b.id, &mail.id).await, Ok(None), "email leaks");
    let by_contact = EventQuery {
        contact_id: Some(active.id.clone()),
        limit: 100,
        ..Default::default()
    };
    let by_name = EventQuery {
        name: Some("signup".into()),
        limit: 100,
        ..Default::default()
    };
    for query in [
        EventQuery {
            limit: 100,
            ..Default::default()
        },
        by_contact,
        by_name,
    ] {
        assert_eq!(
            s.events(&b.id, &query).await,
            Ok(vec![]),
            "events leak: {query:?}"
        );
    }
    assert_eq!(s.event_names(&b.id).await, Ok(vec![]), "event names leak");

    // Writes addressed to B do not touch A's records.
    commit(
        p.store.as_ref(),
        "deletes addressed to workspace B",
        vec![
            Write::DeleteContact {
                workspace_id: b.id.clone(),
                id: active.id.clone(),
            },
            Write::DeleteKeySet {
                workspace_id: b.id.clone(),
                id: keys.record.id.clone(),
            },
            Write::DeleteTemplate {
                workspace_id: b.id.clone(),
                id: tpl.id.clone(),
            },
        ],
    )
    .await;
    assert!(
        s.contact(&a.id, &active.id).await.ok().flatten().is_some(),
        "B deleted A's contact"
    );
    assert_eq!(
        s.key_sets(&a.id).await.map(|k| k.len()),
        Ok(1),
        "B deleted A's key set"
    );
    assert!(
        s.template(&a.id, &tpl.id).await.ok().flatten().is_some(),
        "B deleted A's template"
    );

    // The same email may be a contact of both workspaces.
    let mut twin = contact(&b.id, "twin", true, now);
    twin.email = active.email.clone();
    commit(
        p.store.as_ref(),
        "the same email in workspace B",
        vec![Write::InsertContact(twin.clone())],
    )
    .await;
    let found = s.contact_by_email(&b.id, active.email.as_str()).await;
    assert_eq!(found.ok().flatten().map(|c| c.id), Some(twin.id));
    let found = s.contact_by_email(&a.id, active.email.as_str()).await;
    assert_eq!(found.ok().flatten().map(|c| c.id), Some(active.id));
}

/// Segments, memberships, event facts, condition queries and campaigns of one workspace are
/// invisible to every read with another workspace's id, and its writes do not touch them.
pub async fn isolation_of_segments_and_campaigns(p: &StorePorts) {
    let a = workspace(p, "owner").await;
    let b = workspace(p, "stranger").await;
    let now = now_ms();
    let s = p.store.as_ref();

    let seg = segment(&a.id, "secret", SegmentType::Dynamic, true, now);
    let mut member = contact(&a.id, "member", true, now);
    member.data = object(json!({"plan": "pro"}));
    let camp = campaign(&a.id, "secret", now);
    commit(
        s,
        "segment, member, campaign and email of workspace A",
        vec![
            Write::PutSegment(seg.clone()),
            Write::InsertContact(member.clone()),
            add_member(&a.id, &seg.id, &member.id),
            Write::AppendEvent(event(&a.id, "purchase", Some(&member.id), now)),
            Write::InsertCampaign(camp.clone()),
            Write::InsertEmail(campaign_email(&member, &camp.id, now)),
        ],
    )
    .await;
    // The same pro contact in B must not show up in A either.
    let mut twin = contact(&b.id, "twin", true, now);
    twin.data = object(json!({"plan": "pro"}));
    commit(
        s,
        "a pro contact in B",
        vec![Write::InsertContact(twin.clone())],
    )
    .await;

    let everyone = MatchQuery {
        limit: 100,
        ..Default::default()
    };
    let pro = plan_is_pro();
    let member_of = condition(json!({"logic": "AND", "groups": [{"filters": [
        {"field": format!("segment.{}", seg.id), "operator": "memberOfSegment"}
    ]}]}));
    // Sanity: A sees its own records, so the checks below mean something.
    assert_eq!(s.segment_member_count(&a.id, &seg.id).await, Ok(1));
    let found = s.contacts_matching(&a.id, &pro, &everyone, now).await;
    assert_eq!(found, Ok(vec![member.clone()]), "A's pro contacts");
    assert_eq!(s.count_matching(&a.id, &member_of, false, now).await, Ok(1));

    assert_eq!(s.segment(&b.id, &seg.id).await, Ok(None), "segment leaks");
    assert_eq!(
        s.segments(&b.id, 0, 10).await,
        Ok((vec![], 0)),
        "segment listing leaks"
    );
    assert_eq!(
        s.tracked_segments(&b.id).await,
        Ok(vec![]),
        "tracked segments leak"
    );
    assert_eq!(
        s.segment_member_count(&b.id, &seg.id).await,
        Ok(0),
        "member count leaks"
    );
    assert_eq!(
        s.segment_members(&b.id, &seg.id, 0, 10).await,
        Ok(vec![]),
        "members leak"
    );
    assert_eq!(
        s.segment_member_ids(&b.id, &seg.id, None, 10).await,
        Ok(vec![]),
        "member ids leak"
    );
    assert_eq!(
        s.memberships(&b.id, &member.id).await,
        Ok(HashSet::new()),
        "memberships leak"
    );
    assert_eq!(
        s.contact_event_facts(&b.id, &member.id).await,
        Ok(vec![]),
        "event facts leak"
    );
    let found = s.contacts_matching(&b.id, &pro, &everyone, now).await;
    assert_eq!(found, Ok(vec![twin.clone()]), "condition queries leak");
    assert_eq!(
        s.count_matching(&b.id, &pro, false, now).await,
        Ok(1),
        "counts leak"
    );
    assert_eq!(
        s.count_matching(&b.id, &member_of, false, now).await,
        Ok(0),
        "memberships leak into conditions"
    );
    assert_eq!(
        s.campaign(&b.id, &camp.id).await,
        Ok(None),
        "campaign leaks"
    );
    assert_eq!(
        s.campaigns(&b.id, None, 0, 10).await,
        Ok((vec![], 0)),
        "campaign listing leaks"
    );
    assert_eq!(
        s.campaign_email_counts(&b.id, &camp.id).await,
        Ok(EmailCounts::default()),
        "campaign counts leak"
    );

    // Writes addressed to B do not touch A's records.
    commit(
        s,
        "deletes addressed to workspace B",
        vec![
            Write::DeleteSegment {
                workspace_id: b.id.clone(),
                id: seg.id.clone(),
            },
            Write::DeleteCampaign {
                workspace_id: b.id.clone(),
                id: camp.id.clone(),
            },
            Write::DeleteContact {
                workspace_id: b.id.clone(),
                id: member.id.clone(),
            },
        ],
    )
    .await;
    commit_conflicts(
        s,
        "removing A's membership through workspace B",
        vec![remove_member(&b.id, &seg.id, &member.id)],
    )
    .await;
    let mut stolen = camp.clone();
    stolen.workspace_id = b.id.clone();
    stolen.name = "stolen".into();
    commit_conflicts(
        s,
        "updating A's campaign through workspace B",
        vec![Write::UpdateCampaign(stolen)],
    )
    .await;
    assert_eq!(
        s.segment(&a.id, &seg.id).await,
        Ok(Some(seg.clone())),
        "B deleted A's segment"
    );
    assert_eq!(
        s.campaign(&a.id, &camp.id).await,
        Ok(Some(camp.clone())),
        "B changed A's campaign"
    );
    assert_eq!(
        s.memberships(&a.id, &member.id).await,
        Ok(HashSet::from([seg.id.clone()])),
        "B removed A's membership"
    );
    assert_eq!(s.segment_member_count(&a.id, &seg.id).await, Ok(1));
}
