//! The newest subscription, complaint and permanent bounce of a contact
//! (`Store::suppression_facts`).

use posthorn_core::model::{Event, WorkspaceId};
use posthorn_core::ports::{SuppressionFacts, Write};
use serde_json::json;

use crate::fixtures::{commit, event, ids, insert_contact, now_ms, secs, workspace};
use crate::StorePorts;

/// A bounce event of `bounce_type` for the contact at `at`.
fn bounce(
    workspace_id: &WorkspaceId,
    contact: &posthorn_core::model::Contact,
    bounce_type: &str,
    at: chrono::DateTime<chrono::Utc>,
) -> Event {
    Event::new(
        ids(),
        workspace_id,
        "email.bounce",
        json!({ "bounceType": bounce_type }),
        Some(contact.id.clone()),
        None,
        at,
    )
}

/// Each fact is the newest (greatest id) event of its kind of that contact only: none for
/// a contact without events; a permanent bounce found behind newer transient ones and one
/// without `bounceType`; the newest unsubscription's reason; another contact's and another
/// workspace's events not counted. Newest by id, not by time: an event recorded later with
/// an earlier timestamp (a late provider report) is the newer.
pub async fn suppression_facts_are_the_newest_of_each(p: &StorePorts) {
    let ws = workspace(p, "suppression-facts").await;
    let other_ws = workspace(p, "suppression-facts-other").await;
    let s = p.store.as_ref();
    let t = now_ms();
    let alice = insert_contact(p, &ws.id, "suppressed-alice", false, t).await;
    let bob = insert_contact(p, &ws.id, "suppressed-bob", false, t).await;
    let facts = s.suppression_facts(&ws.id, &alice.id).await;
    assert_eq!(facts, Ok(SuppressionFacts::default()), "no events yet");

    let unsubscribed = |contact: &posthorn_core::model::Contact, reason: Option<&str>, at| {
        let data = reason.map_or(json!({}), |r| json!({ "reason": r }));
        Event::new(
            ids(),
            &ws.id,
            "contact.unsubscribed",
            data,
            Some(contact.id.clone()),
            None,
            at,
        )
    };
    // In recording order (ids increase), with times that do not.
    let alice_events = vec![
        event(&ws.id, "contact.subscribed", Some(&alice.id), secs(t, 5)),
        unsubscribed(&alice, None, secs(t, 9)),
        event(&ws.id, "contact.subscribed", Some(&alice.id), secs(t, 1)),
        event(&ws.id, "email.complaint", Some(&alice.id), secs(t, 2)),
        bounce(&ws.id, &alice, "Permanent", secs(t, 8)),
        bounce(&ws.id, &alice, "Permanent", secs(t, 3)),
        bounce(&ws.id, &alice, "Transient", secs(t, 9)),
        event(&ws.id, "email.bounce", Some(&alice.id), secs(t, 9)),
        unsubscribed(&alice, Some("bounce"), secs(t, 4)),
    ];
    let expected = SuppressionFacts {
        subscribed: Some(alice_events[2].id.clone()),
        complained: Some(alice_events[3].id.clone()),
        bounced: Some(alice_events[5].id.clone()),
        unsubscribe_reason: Some("bounce".to_owned()),
    };
    let bob_events = vec![
        event(&ws.id, "contact.subscribed", Some(&bob.id), secs(t, 20)),
        event(&ws.id, "email.complaint", Some(&bob.id), secs(t, 21)),
        bounce(&ws.id, &bob, "Permanent", secs(t, 22)),
        unsubscribed(&bob, Some("complaint"), secs(t, 23)),
        unsubscribed(&bob, None, secs(t, 24)),
    ];
    let bob_expected = SuppressionFacts {
        subscribed: Some(bob_events[0].id.clone()),
        complained: Some(bob_events[1].id.clone()),
        bounced: Some(bob_events[2].id.clone()),
        unsubscribe_reason: None,
    };
    let stranger = insert_contact(p, &other_ws.id, "suppressed-stranger", false, t).await;
    let mut writes: Vec<Event> = alice_events.into_iter().chain(bob_events).collect();
    writes.push(event(
        &other_ws.id,
        "email.complaint",
        Some(&stranger.id),
        secs(t, 30),
    ));
    commit(
        s,
        "storing the events",
        writes.into_iter().map(Write::AppendEvent).collect(),
    )
    .await;
    assert_eq!(
        s.suppression_facts(&ws.id, &alice.id).await,
        Ok(expected),
        "alice's newest of each"
    );
    assert_eq!(
        s.suppression_facts(&ws.id, &bob.id).await,
        Ok(bob_expected),
        "bob's"
    );
    assert_eq!(
        s.suppression_facts(&other_ws.id, &alice.id).await,
        Ok(SuppressionFacts::default()),
        "alice's id in another workspace"
    );
}
