//! Condition queries: a contact's event facts, `contacts_matching` and `count_matching`,
//! held to the pure evaluator `segment::matches`.

use posthorn_core::model::WorkspaceId;
use posthorn_core::model::{ContactId, SegmentId};
use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use posthorn_core::model::{Contact, ContactStatus, Event, SegmentType};
use posthorn_core::ports::{MatchQuery, Store, Write};
use posthorn_core::segment::{generate, matches, Condition, EventFact, Field};
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde_json::{json, Value};

use super::conditions::{activity_event_name, Person};
use crate::fixtures::{
    add_member, commit, commit_conflicts, condition, contact, event, now_ms, object, plan_is_pro,
    secs, segment, workspace,
};
use crate::StorePorts;

fn sorted_facts(mut facts: Vec<EventFact>) -> Vec<EventFact> {
    facts.sort_by(|a, b| (a.at, &a.name).cmp(&(b.at, &b.name)));
    facts
}

/// A contact's event facts are all its events as (name, time), and only its events.
pub async fn contact_event_facts_of_contact(p: &StorePorts) {
    let ws = workspace(p, "facts").await;
    let now = now_ms();
    let s = p.store.as_ref();
    let c = contact(&ws.id, "facts", true, now);
    let d = contact(&ws.id, "other", true, now);
    let mine = [
        ("signup", secs(now, -3600)),
        ("email.open", secs(now, -60)),
        ("signup", secs(now, -10)),
        ("signup", secs(now, -10)),
    ];
    let mut writes = vec![
        Write::InsertContact(c.clone()),
        Write::InsertContact(d.clone()),
        Write::AppendEvent(event(&ws.id, "purchase", Some(&d.id), now)),
        Write::AppendEvent(event(&ws.id, "purchase", None, now)),
    ];
    for (name, at) in mine {
        writes.push(Write::AppendEvent(event(&ws.id, name, Some(&c.id), at)));
    }
    commit(s, "a contact with events", writes).await;

    let expected: Vec<EventFact> = mine
        .iter()
        .map(|(name, at)| EventFact {
            name: name.to_string(),
            at: *at,
        })
        .collect();
    let got = s
        .contact_event_facts(&ws.id, &c.id)
        .await
        .expect("contact_event_facts failed");
    assert_eq!(
        sorted_facts(got),
        sorted_facts(expected.clone()),
        "event facts of the contact"
    );
    assert_eq!(
        s.contact_event_facts(&ws.id, &crate::fixtures::fresh_id())
            .await,
        Ok(vec![]),
        "an unknown contact has no facts"
    );

    let mut clash = contact(&ws.id, "clash", true, now);
    clash.email = d.email.clone();
    commit_conflicts(
        s,
        "an event, then a conflicting insert",
        vec![
            Write::AppendEvent(event(&ws.id, "purchase", Some(&c.id), now)),
            Write::InsertContact(clash),
        ],
    )
    .await;
    let got = s
        .contact_event_facts(&ws.id, &c.id)
        .await
        .expect("contact_event_facts failed");
    assert_eq!(
        sorted_facts(got),
        sorted_facts(expected),
        "an event of a failed change set counts"
    );
}

/// Every contact `contacts_matching` returns for `query`, walked page by page.
async fn walk(
    store: &dyn Store,
    workspace_id: &WorkspaceId,
    condition: &Condition,
    base: MatchQuery,
    now: DateTime<Utc>,
    max: usize,
) -> Vec<ContactId> {
    let mut all: Vec<ContactId> = Vec::new();
    let mut after = base.after_id.clone();
    loop {
        let query = MatchQuery {
            after_id: after.clone(),
            ..base.clone()
        };
        let page = store
            .contacts_matching(workspace_id, condition, &query, now)
            .await
            .unwrap_or_else(|e| panic!("contacts_matching failed for {query:?}: {e}"));
        assert!(
            page.len() <= base.limit,
            "a page longer than the limit: {query:?}"
        );
        let done = page.len() < base.limit;
        if let Some(last) = page.last() {
            after = Some(last.id.clone());
        }
        all.extend(page.into_iter().map(|c| c.id));
        assert!(
            all.len() <= max,
            "the walk returns more contacts than exist: {query:?}"
        );
        if done {
            return all;
        }
    }
}

fn ids(contacts: &[&Contact]) -> Vec<ContactId> {
    contacts.iter().map(|c| c.id.clone()).collect()
}

/// A condition, `after_id`, `until_id`, `audience_only`, `limit` and the positions of the
/// contacts expected.
type BoundsCase = (
    Condition,
    Option<ContactId>,
    Option<ContactId>,
    bool,
    usize,
    Vec<usize>,
);

/// `contacts_matching` walks ascending ids within `after_id`, `until_id`, `audience_only`
/// and `limit`; `count_matching` counts the same contacts; events, email activity and
/// stored memberships are what conditions see.
pub async fn matching_respects_bounds_and_audience(p: &StorePorts) {
    let ws = workspace(p, "bounds").await;
    let now = now_ms();
    let s = p.store.as_ref();
    let seg = segment(&ws.id, "picked", SegmentType::Static, false, now);
    // (plan, subscribed, pending)
    let shapes = [
        (Some("pro"), true, false),
        (Some("free"), true, false),
        (Some("pro"), false, false),
        (Some("pro"), true, true),
        (Some("pro"), true, false),
        (None, true, false),
        (Some("pro"), true, false),
    ];
    let mut cs = Vec::new();
    for (i, (plan, subscribed, pending)) in shapes.iter().enumerate() {
        let mut c = contact(&ws.id, &format!("bounds{i}"), *subscribed, now);
        if let Some(plan) = plan {
            c.data = object(json!({ "plan": plan }));
        }
        if *pending {
            c.status = ContactStatus::Pending;
            c.expires_at = Some(secs(now, 86_400));
        }
        cs.push(c);
    }
    cs.sort_by(|a, b| a.id.cmp(&b.id));
    let mut writes = vec![Write::PutSegment(seg.clone())];
    writes.extend(cs.iter().cloned().map(Write::InsertContact));
    writes.extend([
        Write::AppendEvent(event(&ws.id, "purchase", Some(&cs[1].id), secs(now, -3600))),
        Write::AppendEvent(event(
            &ws.id,
            "email.open",
            Some(&cs[4].id),
            secs(now, -600),
        )),
        Write::AppendEvent(event(&ws.id, "purchase", None, now)),
        add_member(&ws.id, &seg.id, &cs[2].id),
        add_member(&ws.id, &seg.id, &cs[5].id),
    ]);
    commit(s, "contacts, events and memberships", writes).await;

    let pick = |indexes: &[usize]| -> Vec<ContactId> {
        indexes.iter().map(|i| cs[*i].id.clone()).collect()
    };
    let id = |i: usize| Some(cs[i].id.clone());
    let wid = &ws.id;
    let run = |condition: Condition,
               after_id: Option<ContactId>,
               until_id: Option<ContactId>,
               audience_only: bool,
               limit: usize| async move {
        let query = MatchQuery {
            after_id,
            until_id,
            audience_only,
            limit,
        };
        let found = s
            .contacts_matching(wid, &condition, &query, now)
            .await
            .unwrap_or_else(|e| panic!("contacts_matching failed: {e}"));
        (found.into_iter().map(|c| c.id).collect::<Vec<_>>(), query)
    };
    let pro = plan_is_pro;

    let cases: Vec<BoundsCase> = vec![
        (pro(), None, None, false, 100, vec![0, 2, 3, 4, 6]),
        (pro(), None, None, false, 2, vec![0, 2]),
        (pro(), id(2), None, false, 100, vec![3, 4, 6]),
        (pro(), id(1), None, false, 2, vec![2, 3]),
        (pro(), None, id(4), false, 100, vec![0, 2, 3, 4]),
        (pro(), id(0), id(4), false, 100, vec![2, 3, 4]),
        (pro(), id(4), id(4), false, 100, vec![]),
        (pro(), id(6), id(0), false, 100, vec![]),
        (pro(), None, None, true, 100, vec![0, 4, 6]),
        (pro(), None, id(4), true, 100, vec![0, 4]),
        (pro(), None, None, false, 0, vec![]),
        (
            Condition::default(),
            None,
            None,
            false,
            100,
            vec![0, 1, 2, 3, 4, 5, 6],
        ),
        (
            Condition::default(),
            None,
            None,
            true,
            100,
            vec![0, 1, 4, 5, 6],
        ),
    ];
    for (condition, after, until, audience, limit, expected) in cases {
        let (found, query) = run(condition.clone(), after, until, audience, limit).await;
        assert_eq!(
            found,
            pick(&expected),
            "{query:?} with {}",
            condition.to_json()
        );
    }

    let paged = walk(
        s,
        &ws.id,
        &pro(),
        MatchQuery {
            limit: 2,
            ..Default::default()
        },
        now,
        7,
    )
    .await;
    assert_eq!(paged, pick(&[0, 2, 3, 4, 6]), "pages of 2");

    let single =
        |filter: Value| condition(json!({"logic": "AND", "groups": [{"filters": [filter]}]}));
    let by_fact = [
        (
            single(json!({"field": "event.purchase", "operator": "triggered"})),
            vec![1],
        ),
        (
            single(json!({"field": "event.purchase", "operator": "notTriggered"})),
            vec![0, 2, 3, 4, 5, 6],
        ),
        (
            single(json!({"field": "email.opened", "operator": "triggered"})),
            vec![4],
        ),
        (
            single(json!({"field": "event.email.open", "operator": "triggered"})),
            vec![4],
        ),
        (
            single(
                json!({"field": "email.opened", "operator": "triggeredWithin", "value": 1, "unit": "hours"}),
            ),
            vec![4],
        ),
        (
            single(
                json!({"field": "email.opened", "operator": "triggeredWithin", "value": 5, "unit": "minutes"}),
            ),
            vec![],
        ),
        (
            single(json!({"field": "email.clicked", "operator": "triggered"})),
            vec![],
        ),
        (
            single(json!({"field": format!("segment.{}", seg.id), "operator": "memberOfSegment"})),
            vec![2, 5],
        ),
        (
            single(
                json!({"field": format!("segment.{}", seg.id), "operator": "notMemberOfSegment"}),
            ),
            vec![0, 1, 3, 4, 6],
        ),
        (
            condition(json!({"logic": "OR", "groups": [
                {"filters": [{"field": "data.plan", "operator": "equals", "value": "pro"}]},
                {"filters": [{"field": format!("segment.{}", seg.id), "operator": "memberOfSegment"}]}
            ]})),
            vec![0, 2, 3, 4, 5, 6],
        ),
    ];
    for (condition, expected) in by_fact {
        let (found, _) = run(condition.clone(), None, None, false, 100).await;
        assert_eq!(found, pick(&expected), "matching {}", condition.to_json());
        let count = s.count_matching(&ws.id, &condition, false, now).await;
        assert_eq!(
            count,
            Ok(expected.len() as u64),
            "counting {}",
            condition.to_json()
        );
    }

    assert_eq!(s.count_matching(&ws.id, &pro(), false, now).await, Ok(5));
    assert_eq!(s.count_matching(&ws.id, &pro(), true, now).await, Ok(3));
    assert_eq!(
        s.count_matching(&ws.id, &Condition::default(), false, now)
            .await,
        Ok(7)
    );
    assert_eq!(
        s.count_matching(&ws.id, &Condition::default(), true, now)
            .await,
        Ok(5)
    );
}

/// Replaces the generator's segment ids with the stored segments' ids.
fn map_segments(condition: &mut Condition, ids: &HashMap<SegmentId, SegmentId>) {
    for group in &mut condition.groups {
        for filter in &mut group.filters {
            if let Field::Segment(id) = &mut filter.field {
                if let Some(real) = ids.get(id) {
                    *id = real.clone();
                }
            }
        }
        if let Some(nested) = &mut group.conditions {
            map_segments(nested, ids);
        }
    }
}

const SEEDS: [u64; 3] = [7, 2024, 987_654_321];
const CONTACTS: usize = 60;
const CONDITIONS: usize = 40;

/// For generated contacts (data, events, email activity, memberships) and generated
/// conditions, `contacts_matching` (paged, bounded, audience only) and `count_matching`
/// return exactly the contacts `segment::matches` accepts.
pub async fn matching_equals_pure_evaluator(p: &StorePorts) {
    let now = now_ms();
    for seed in SEEDS {
        check_seed(p, seed, now).await;
    }
}

async fn check_seed(p: &StorePorts, seed: u64, now: DateTime<Utc>) {
    let ws = workspace(p, &format!("matching-{seed}")).await;
    let s = p.store.as_ref();
    let mut rng = StdRng::seed_from_u64(seed);

    let mut segment_ids = HashMap::new();
    let mut writes = Vec::new();
    for generated_id in generate::SEGMENT_IDS {
        let seg = segment(&ws.id, generated_id, SegmentType::Static, false, now);
        segment_ids.insert(SegmentId::from(*generated_id), seg.id.clone());
        writes.push(Write::PutSegment(seg));
    }
    let mut people = Vec::new();
    for i in 0..CONTACTS {
        let generated = generate::contact_facts(&mut rng, &ws.id, i, now);
        let mut contact = generated.contact;
        if i % 9 == 4 {
            contact.status = ContactStatus::Pending;
            contact.expires_at = Some(secs(now, 86_400));
        }
        writes.push(Write::InsertContact(contact.clone()));
        let stored = |name: &str, at| {
            Write::AppendEvent(Event::new(
                crate::fixtures::ids(),
                &ws.id,
                name,
                json!({}),
                Some(contact.id.clone()),
                None,
                at,
            ))
        };
        let mut events = generated.events.clone();
        for e in &generated.events {
            writes.push(stored(&e.name, e.at));
        }
        for a in &generated.activity {
            let name = activity_event_name(a.activity);
            writes.push(stored(name, a.at));
            events.push(EventFact {
                name: name.to_string(),
                at: a.at,
            });
        }
        let segments: HashSet<SegmentId> = generated
            .segments
            .iter()
            .map(|id| segment_ids[id].clone())
            .collect();
        for segment_id in &segments {
            writes.push(add_member(&ws.id, segment_id, &contact.id));
        }
        people.push(Person {
            label: "generated",
            contact,
            events,
            activity: generated.activity,
            segments,
        });
    }
    // Events about nobody count for nobody.
    for name in ["signup", "purchase", "email.open"] {
        writes.push(Write::AppendEvent(Event::new(
            crate::fixtures::ids(),
            &ws.id,
            name,
            json!({}),
            None,
            None,
            now,
        )));
    }
    commit(s, "generated contacts", writes).await;
    people.sort_by(|a, b| a.contact.id.cmp(&b.contact.id));
    let position: HashMap<&str, usize> = people
        .iter()
        .enumerate()
        .map(|(i, p)| (p.contact.id.as_str(), i))
        .collect();
    let positions = |ids: &[ContactId]| -> Vec<usize> {
        ids.iter()
            .map(|id| position.get(id.as_str()).copied().unwrap_or(usize::MAX))
            .collect()
    };

    for person in &people {
        let got = s
            .contact_event_facts(&ws.id, &person.contact.id)
            .await
            .expect("contact_event_facts failed");
        assert_eq!(
            sorted_facts(got),
            sorted_facts(person.events.clone()),
            "seed {seed}: event facts of a generated contact"
        );
        assert_eq!(
            s.memberships(&ws.id, &person.contact.id).await,
            Ok(person.segments.clone()),
            "seed {seed}: memberships of a generated contact"
        );
    }

    let mut discriminating = 0;
    for j in 0..CONDITIONS {
        let mut condition = generate::condition(&mut rng, now);
        map_segments(&mut condition, &segment_ids);
        let shown = condition.to_json();
        let matching: Vec<&Person> = people
            .iter()
            .filter(|person| matches(&condition, &person.facts(), now))
            .collect();
        if !matching.is_empty() && matching.len() < people.len() {
            discriminating += 1;
        }
        let expected: Vec<&Contact> = matching.iter().map(|p| &p.contact).collect();
        let what = |how: &str| format!("seed {seed}, condition {j} ({how}): {shown}");

        // One page holding everything: whole contacts.
        let everything = MatchQuery {
            limit: 1000,
            ..Default::default()
        };
        let found = s
            .contacts_matching(&ws.id, &condition, &everything, now)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", what("one page")));
        let found_ids: Vec<ContactId> = found.iter().map(|c| c.id.clone()).collect();
        assert_eq!(
            positions(&found_ids),
            positions(&ids(&expected)),
            "{}",
            what("one page, contact positions")
        );
        let expected_records: Vec<Contact> = expected.iter().map(|c| (*c).clone()).collect();
        assert_eq!(found, expected_records, "{}", what("one page, records"));

        // Small pages.
        let limit = 2 + j % 5;
        let walked = walk(
            s,
            &ws.id,
            &condition,
            MatchQuery {
                limit,
                ..Default::default()
            },
            now,
            CONTACTS,
        )
        .await;
        assert_eq!(
            positions(&walked),
            positions(&ids(&expected)),
            "{}",
            what(&format!("pages of {limit}"))
        );

        // An audience snapshot: up to some contact, subscribed and ACTIVE only.
        let until = &people[(j * 17 + 5) % CONTACTS].contact.id;
        let limit = 3 + j % 4;
        let walked = walk(
            s,
            &ws.id,
            &condition,
            MatchQuery {
                until_id: Some(until.clone()),
                audience_only: true,
                limit,
                ..Default::default()
            },
            now,
            CONTACTS,
        )
        .await;
        let audience: Vec<&Person> = matching
            .iter()
            .copied()
            .filter(|p| p.in_audience())
            .collect();
        let bounded: Vec<&Contact> = audience
            .iter()
            .filter(|p| p.contact.id <= *until)
            .map(|p| &p.contact)
            .collect();
        assert_eq!(
            positions(&walked),
            positions(&ids(&bounded)),
            "{}",
            what(&format!(
                "audience until position {}, pages of {limit}",
                position[until.as_str()]
            ))
        );

        // Counts.
        assert_eq!(
            s.count_matching(&ws.id, &condition, false, now).await,
            Ok(matching.len() as u64),
            "{}",
            what("count")
        );
        assert_eq!(
            s.count_matching(&ws.id, &condition, true, now).await,
            Ok(audience.len() as u64),
            "{}",
            what("audience count")
        );
    }
    assert!(
        discriminating >= 5,
        "seed {seed}: only {discriminating} generated conditions split the contacts; the check is too weak"
    );
}
