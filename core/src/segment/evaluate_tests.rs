use super::*;
use crate::model::EmailAddress;
use crate::segment::{generate, parse_condition, TimeUnit};
use chrono::{Duration, TimeZone};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde_json::json;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 6, 1, 12, 0, 0)
        .single()
        .expect("valid date")
}

struct Fixture {
    contact: Contact,
    events: Vec<EventFact>,
    activity: Vec<ActivityFact>,
    segments: HashSet<crate::model::SegmentId>,
}

impl Fixture {
    fn new() -> Self {
        let data = json!({
            "plan": "Gold",
            "age": 18,
            "score": 18.5,
            "tags": ["vip", 1, "Beta"],
            "bio": "Loves Früh Kaffee",
            "lastSeen": "2024-06-01T11:00:00Z",
            "nested": {"tier": "gold", "n": null},
            "arr": [{"x": 1}],
            "flag": false,
            "numstr": "18",
            "bad": "2023-02-30T00:00:00Z",
        });
        let email = EmailAddress::parse("Ada@Example.com").expect("valid");
        let mut contact = Contact::new(
            &crate::ports::SystemClock,
            &crate::model::WorkspaceId::from("ws"),
            email,
            true,
            data.as_object().cloned().unwrap_or_default(),
            false,
            now(),
        );
        contact.created_at = now() - Duration::days(2);
        contact.updated_at = now() - Duration::hours(1);
        let event = |name: &str, ago: Duration| EventFact {
            name: name.to_string(),
            at: now() - ago,
        };
        Self {
            contact,
            events: vec![
                event("signup", Duration::days(10)),
                event("purchase", Duration::hours(1)),
                event("purchase", Duration::days(3)),
                event("order.placed", Duration::days(1)),
            ],
            activity: vec![
                ActivityFact {
                    activity: Activity::Opened,
                    at: now() - Duration::minutes(30),
                },
                ActivityFact {
                    activity: Activity::Sent,
                    at: now() - Duration::days(2),
                },
            ],
            segments: HashSet::from([crate::model::SegmentId::from("s1")]),
        }
    }

    fn facts(&self) -> ContactFacts<'_> {
        ContactFacts {
            contact: &self.contact,
            events: &self.events,
            activity: &self.activity,
            segments: &self.segments,
        }
    }

    /// Parses a condition and evaluates it at `now()`.
    fn check(&self, condition: Value) -> bool {
        let c = parse_condition(&condition, "condition").expect("valid condition");
        matches(&c, &self.facts(), now())
    }

    /// One filter `{field, operator, value}` (with `unit` when given).
    fn test(&self, field: &str, operator: &str, value: Value) -> bool {
        self.check(json!({"groups": [{"filters": [{"field": field, "operator": operator, "value": value}]}]}))
    }

    fn window(&self, field: &str, operator: &str, value: Value, unit: &str) -> bool {
        self.check(json!({"groups": [{"filters": [
            {"field": field, "operator": operator, "value": value, "unit": unit}
        ]}]}))
    }

    /// Asserts `operator` gives `expected` and its negation the opposite.
    fn both(&self, field: &str, positive: &str, negative: &str, value: Value, expected: bool) {
        assert_eq!(
            self.test(field, positive, value.clone()),
            expected,
            "{field} {positive} {value}"
        );
        assert_eq!(
            self.test(field, negative, value.clone()),
            !expected,
            "{field} {negative} {value}"
        );
    }
}

#[test]
fn structure() {
    let f = Fixture::new();
    assert!(f.check(json!({"groups": []})));
    assert!(f.check(json!({"logic": "OR", "groups": []})));
    assert!(f.check(json!({"groups": [{}]})));
    assert!(f.check(json!({"logic": "OR", "groups": [{"filters": []}]})));
    let yes = json!({"field": "subscribed", "operator": "equals", "value": true});
    let no = json!({"field": "subscribed", "operator": "equals", "value": false});
    assert!(!f.check(json!({"groups": [{"filters": [yes]}, {"filters": [no]}]})));
    assert!(f.check(json!({"logic": "OR", "groups": [{"filters": [yes]}, {"filters": [no]}]})));
    assert!(!f.check(json!({"groups": [{"filters": [yes, no]}]})));
    // A group's filters AND its nested condition.
    assert!(!f.check(
        json!({"groups": [{"filters": [yes], "conditions": {"groups": [{"filters": [no]}]}}]})
    ));
    assert!(f.check(json!({"groups": [{"filters": [yes], "conditions": {"logic": "OR", "groups": [{"filters": [no]}, {"filters": [yes]}]}}]})));
    assert!(!f.check(
        json!({"groups": [{"filters": [], "conditions": {"groups": [{"filters": [no]}]}}]})
    ));
}

#[test]
fn email_is_compared_in_lower_case() {
    let f = Fixture::new();
    f.both(
        "email",
        "equals",
        "notEquals",
        json!("ADA@example.COM"),
        true,
    );
    f.both(
        "email",
        "equals",
        "notEquals",
        json!("bob@example.com"),
        false,
    );
    f.both("email", "equals", "notEquals", json!("ada@example"), false);
    f.both("email", "contains", "notContains", json!("EXAMPLE.c"), true);
    f.both("email", "contains", "notContains", json!("@test.io"), false);
    f.both("email", "contains", "notContains", json!(""), true);
}

#[test]
fn subscribed() {
    let f = Fixture::new();
    f.both("subscribed", "equals", "notEquals", json!(true), true);
    f.both("subscribed", "equals", "notEquals", json!(false), false);
}

#[test]
fn contact_timestamps() {
    let f = Fixture::new();
    let created = "2024-05-30T12:00:00Z";
    let same_instant = "2024-05-30T14:00:00+02:00";
    assert!(f.test("createdAt", "greaterThan", json!("2024-05-29T12:00:00Z")));
    assert!(!f.test("createdAt", "greaterThan", json!(created)));
    assert!(f.test("createdAt", "greaterThanOrEqual", json!(same_instant)));
    assert!(f.test("createdAt", "lessThanOrEqual", json!(same_instant)));
    assert!(!f.test("createdAt", "lessThan", json!(created)));
    assert!(f.test(
        "createdAt",
        "lessThan",
        json!("2024-05-30T12:00:00.000001Z")
    ));
    // `within` includes the boundary, `olderThan` excludes it.
    assert!(f.window("createdAt", "within", json!(2), "days"));
    assert!(f.window("createdAt", "within", json!(48), "hours"));
    assert!(!f.window("createdAt", "within", json!(47), "hours"));
    assert!(!f.window("createdAt", "olderThan", json!(2), "days"));
    assert!(f.window("createdAt", "olderThan", json!(1.5), "days"));
    assert!(f.window("updatedAt", "within", json!(60), "minutes"));
    assert!(!f.window("updatedAt", "within", json!(59.5), "minutes"));
    assert!(f.window("updatedAt", "olderThan", json!(59.5), "minutes"));
}

#[test]
fn data_equals_and_exists() {
    let f = Fixture::new();
    f.both("data.plan", "equals", "notEquals", json!("Gold"), true);
    f.both("data.plan", "equals", "notEquals", json!("gold"), false);
    f.both("data.age", "equals", "notEquals", json!(18.0), true);
    f.both("data.age", "equals", "notEquals", json!("18"), false);
    f.both("data.numstr", "equals", "notEquals", json!(18), false);
    f.both("data.flag", "equals", "notEquals", json!(false), true);
    f.both("data.flag", "equals", "notEquals", json!(0), false);
    f.both(
        "data.nested.tier",
        "equals",
        "notEquals",
        json!("gold"),
        true,
    );
    f.both("data.tags", "equals", "notEquals", json!("vip"), false);
    f.both("data.missing", "equals", "notEquals", json!("x"), false);
    f.both("data.plan", "exists", "notExists", Value::Null, true);
    f.both("data.nested.tier", "exists", "notExists", Value::Null, true);
    f.both("data.nested.n", "exists", "notExists", Value::Null, false);
    f.both("data.nested.n.x", "exists", "notExists", Value::Null, false);
    f.both("data.arr.0", "exists", "notExists", Value::Null, false);
    f.both("data.arr.0.x", "exists", "notExists", Value::Null, false);
    f.both("data.plan.x", "exists", "notExists", Value::Null, false);
    f.both("data.missing", "exists", "notExists", Value::Null, false);
}

#[test]
fn data_contains() {
    let f = Fixture::new();
    f.both("data.bio", "contains", "notContains", json!("früh"), true);
    f.both("data.bio", "contains", "notContains", json!("FRÜH k"), true);
    f.both("data.bio", "contains", "notContains", json!("tea"), false);
    f.both("data.plan", "contains", "notContains", json!("OL"), true);
    f.both("data.tags", "contains", "notContains", json!("vip"), true);
    f.both("data.tags", "contains", "notContains", json!("VIP"), false);
    f.both("data.tags", "contains", "notContains", json!("Bet"), false);
    f.both("data.tags", "contains", "notContains", json!(1.0), true);
    f.both("data.tags", "contains", "notContains", json!("1"), false);
    f.both("data.age", "contains", "notContains", json!(1), false);
    f.both("data.numstr", "contains", "notContains", json!(1), false);
    f.both("data.missing", "contains", "notContains", json!("x"), false);
}

#[test]
fn data_comparisons() {
    let f = Fixture::new();
    assert!(f.test("data.age", "greaterThan", json!(17)));
    assert!(!f.test("data.age", "greaterThan", json!(18)));
    assert!(f.test("data.age", "greaterThanOrEqual", json!(18.0)));
    assert!(!f.test("data.age", "lessThan", json!(18)));
    assert!(f.test("data.score", "lessThanOrEqual", json!(18.5)));
    assert!(f.test("data.score", "lessThan", json!(19)));
    assert!(!f.test("data.numstr", "greaterThan", json!(1)));
    assert!(!f.test("data.plan", "greaterThan", json!(1)));
    assert!(!f.test("data.tags", "greaterThan", json!(0)));
    assert!(!f.test("data.missing", "lessThan", json!(1)));
    assert!(f.test(
        "data.lastSeen",
        "greaterThan",
        json!("2024-06-01T10:59:59.999999Z")
    ));
    assert!(!f.test(
        "data.lastSeen",
        "lessThan",
        json!("2024-06-01T13:00:00+02:00")
    ));
    assert!(f.test(
        "data.lastSeen",
        "lessThanOrEqual",
        json!("2024-06-01T13:00:00+02:00")
    ));
    assert!(!f.test("data.age", "greaterThan", json!("2024-01-01T00:00:00Z")));
    assert!(!f.test("data.lastSeen", "greaterThan", json!(1)));
    assert!(!f.test("data.bad", "lessThan", json!("2030-01-01T00:00:00Z")));
    assert!(!f.test("data.bad", "greaterThan", json!("2000-01-01T00:00:00Z")));
}

#[test]
fn data_time_windows() {
    let f = Fixture::new();
    assert!(f.window("data.lastSeen", "within", json!(1), "hours"));
    assert!(!f.window("data.lastSeen", "within", json!(59), "minutes"));
    assert!(f.window("data.lastSeen", "olderThan", json!(59), "minutes"));
    assert!(!f.window("data.lastSeen", "olderThan", json!(60), "minutes"));
    assert!(!f.window("data.bad", "olderThan", json!(1), "days"));
    assert!(!f.window("data.bad", "within", json!(30_000), "days"));
    assert!(!f.window("data.age", "within", json!(1), "days"));
    assert!(!f.window("data.missing", "olderThan", json!(1), "days"));
}

#[test]
fn events() {
    let f = Fixture::new();
    let flag = |field: &str, op: &str| {
        f.check(json!({"groups": [{"filters": [{"field": field, "operator": op}]}]}))
    };
    assert!(flag("event.signup", "triggered"));
    assert!(flag("event.order.placed", "triggered"));
    assert!(!flag("event.Signup", "triggered"));
    assert!(!flag("event.other", "triggered"));
    assert!(flag("event.other", "notTriggered"));
    assert!(!flag("event.signup", "notTriggered"));
    assert!(f.test("event.signup", "equals", json!(true)));
    assert!(!f.test("event.signup", "equals", json!(false)));
    assert!(f.test("event.other", "equals", json!(false)));
    assert!(f.window("event.purchase", "triggeredWithin", json!(1), "hours"));
    assert!(!f.window("event.purchase", "triggeredWithin", json!(59), "minutes"));
    assert!(f.window("event.purchase", "notTriggeredWithin", json!(59), "minutes"));
    assert!(!f.window("event.purchase", "notTriggeredWithin", json!(1), "hours"));
    assert!(f.window("event.purchase", "triggeredOlderThan", json!(2), "days"));
    assert!(!f.window("event.purchase", "triggeredOlderThan", json!(3), "days"));
    assert!(!f.window("event.other", "triggeredOlderThan", json!(1), "minutes"));
    assert!(f.window("event.other", "notTriggeredWithin", json!(30), "days"));
}

#[test]
fn email_activity() {
    let f = Fixture::new();
    let flag = |field: &str, op: &str| {
        f.check(json!({"groups": [{"filters": [{"field": field, "operator": op}]}]}))
    };
    assert!(flag("email.opened", "triggered"));
    assert!(!flag("email.clicked", "triggered"));
    assert!(flag("email.clicked", "notTriggered"));
    assert!(f.test("email.sent", "equals", json!(true)));
    assert!(f.window("email.opened", "triggeredWithin", json!(30), "minutes"));
    assert!(!f.window("email.opened", "triggeredWithin", json!(29), "minutes"));
    assert!(f.window("email.opened", "notTriggeredWithin", json!(29), "minutes"));
    assert!(f.window("email.sent", "triggeredOlderThan", json!(1), "days"));
    assert!(!f.window("email.sent", "triggeredOlderThan", json!(2), "days"));
}

#[test]
fn segment_membership() {
    let f = Fixture::new();
    let flag = |field: &str, op: &str| {
        f.check(json!({"groups": [{"filters": [{"field": field, "operator": op}]}]}))
    };
    assert!(flag("segment.s1", "memberOfSegment"));
    assert!(!flag("segment.s1", "notMemberOfSegment"));
    assert!(!flag("segment.s2", "memberOfSegment"));
    assert!(flag("segment.s2", "notMemberOfSegment"));
}

#[test]
fn hand_built_invalid_filters_do_not_panic() {
    let f = Fixture::new();
    let facts = f.facts();
    let bad = |field: Field, op: Operator, value: Option<Value>| Filter {
        field,
        op,
        value,
        unit: None,
    };
    let cases = [
        bad(Field::Email, Operator::Within, Some(json!(1))),
        bad(Field::Email, Operator::Equals, None),
        bad(Field::CreatedAt, Operator::GreaterThan, Some(json!("nope"))),
        bad(
            Field::Data(vec!["age".into()]),
            Operator::Within,
            Some(json!(1)),
        ),
        bad(
            Field::Event("signup".into()),
            Operator::TriggeredWithin,
            Some(json!(1)),
        ),
        bad(Field::Segment("s1".into()), Operator::Equals, None),
        bad(Field::Data(vec![]), Operator::Exists, None),
    ];
    for filter in cases {
        assert!(!filter_matches(&filter, &facts, now()), "{filter:?}");
    }
    let negated = bad(
        Field::Event("signup".into()),
        Operator::NotTriggeredWithin,
        Some(json!(1)),
    );
    assert!(filter_matches(&negated, &facts, now()));
}

fn single(group: &Group) -> Condition {
    Condition {
        logic: Logic::And,
        groups: vec![group.clone()],
    }
}

fn negation(op: Operator) -> Option<Operator> {
    use Operator as O;
    Some(match op {
        O::Equals => O::NotEquals,
        O::Contains => O::NotContains,
        O::Exists => O::NotExists,
        O::Triggered => O::NotTriggered,
        O::TriggeredWithin => O::NotTriggeredWithin,
        O::MemberOfSegment => O::NotMemberOfSegment,
        _ => return None,
    })
}

proptest! {
    #[test]
    fn or_is_any_group_and_and_is_every_group(seed in any::<u64>()) {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut c = generate::condition(&mut rng, now());
        for i in 0..4 {
            let owned = generate::contact_facts(&mut rng, &"ws".into(), i, now());
            let facts = owned.facts();
            let per_group: Vec<bool> = c.groups.iter().map(|g| matches(&single(g), &facts, now())).collect();
            c.logic = Logic::Or;
            prop_assert_eq!(matches(&c, &facts, now()), per_group.is_empty() || per_group.iter().any(|m| *m));
            c.logic = Logic::And;
            prop_assert_eq!(matches(&c, &facts, now()), per_group.iter().all(|m| *m));
        }
    }

    #[test]
    fn negated_operators_are_exact_negations(seed in any::<u64>()) {
        let mut rng = StdRng::seed_from_u64(seed);
        let owned = generate::contact_facts(&mut rng, &"ws".into(), 0, now());
        let facts = owned.facts();
        for _ in 0..20 {
            let filter = generate::filter(&mut rng, now());
            if let Some(negated) = negation(filter.op) {
                let other = Filter { op: negated, ..filter.clone() };
                prop_assert_ne!(filter_matches(&filter, &facts, now()), filter_matches(&other, &facts, now()));
            }
        }
    }

    #[test]
    fn not_equals_is_not_equals_on_present_paths(
        seed in any::<u64>(),
        value in prop_oneof![
            any::<bool>().prop_map(Value::from),
            (-3i64..40).prop_map(Value::from),
            (-3.0f64..40.0).prop_map(Value::from),
            prop::sample::select(vec!["gold", "Gold", "vip", "18", "flat", ""]).prop_map(Value::from),
        ],
    ) {
        let mut rng = StdRng::seed_from_u64(seed);
        let owned = generate::contact_facts(&mut rng, &"ws".into(), 0, now());
        let facts = owned.facts();
        for path in generate::DATA_PATHS {
            let path: Vec<String> = path.iter().map(|k| k.to_string()).collect();
            let filter = |op| Filter { field: Field::Data(path.clone()), op, value: Some(value.clone()), unit: None };
            let present = filter_matches(
                &Filter { value: None, ..filter(Operator::Exists) },
                &facts,
                now(),
            );
            let equals = filter_matches(&filter(Operator::Equals), &facts, now());
            let not_equals = filter_matches(&filter(Operator::NotEquals), &facts, now());
            prop_assert_eq!(not_equals, !equals);
            if !present {
                prop_assert!(!equals);
            }
        }
    }

    #[test]
    fn generated_conditions_evaluate_both_ways(seed in any::<u64>()) {
        // The generator must produce filters that sometimes hold and sometimes do not.
        let mut rng = StdRng::seed_from_u64(seed);
        let mut outcomes = [0usize; 2];
        for i in 0..30 {
            let filter = generate::filter(&mut rng, now());
            let owned = generate::contact_facts(&mut rng, &"ws".into(), i, now());
            outcomes[usize::from(filter_matches(&filter, &owned.facts(), now()))] += 1;
        }
        prop_assert!(outcomes[0] > 0 && outcomes[1] > 0, "{:?}", outcomes);
    }

    #[test]
    fn windows_grow_with_their_length(seed in any::<u64>(), a in 1u32..100, b in 1u32..100) {
        // A longer window never loses a `within` match, nor gains an `olderThan` match.
        let mut rng = StdRng::seed_from_u64(seed);
        let owned = generate::contact_facts(&mut rng, &"ws".into(), 0, now());
        let facts = owned.facts();
        let (short, long) = (a.min(b), a.max(b));
        for (field, op) in [
            (Field::CreatedAt, Operator::Within),
            (Field::Event("purchase".into()), Operator::TriggeredWithin),
        ] {
            let f = |n: u32| Filter { field: field.clone(), op, value: Some(json!(n)), unit: Some(TimeUnit::Hours) };
            prop_assert!(!filter_matches(&f(short), &facts, now()) || filter_matches(&f(long), &facts, now()));
        }
        let older = |n: u32| Filter { field: Field::UpdatedAt, op: Operator::OlderThan, value: Some(json!(n)), unit: Some(TimeUnit::Hours) };
        prop_assert!(!filter_matches(&older(long), &facts, now()) || filter_matches(&older(short), &facts, now()));
    }
}
