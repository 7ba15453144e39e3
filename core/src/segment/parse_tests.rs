use super::*;
use crate::segment::generate;
use crate::segment::Activity;
use chrono::{TimeZone, Utc};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde_json::json;

fn ok(value: Value) -> Condition {
    match parse_condition(&value, "condition") {
        Ok(c) => c,
        Err(e) => panic!("expected {value} to parse, got {e:?}"),
    }
}

/// The (field, code) pairs of the errors for `value`.
fn errors(value: Value) -> Vec<(String, String)> {
    match parse_condition(&value, "condition") {
        Ok(c) => panic!("expected {value} to fail, got {c:?}"),
        Err(e) => e.into_iter().map(|e| (e.field, e.code)).collect(),
    }
}

fn one_filter(filter: Value) -> Value {
    json!({"groups": [{"filters": [filter]}]})
}

fn filter_errors(filter: Value) -> Vec<(String, String)> {
    errors(one_filter(filter))
}

fn err(field: &str, code: &str) -> (String, String) {
    (field.to_string(), code.to_string())
}

const F0: &str = "condition.groups.0.filters.0";

fn at(suffix: &str, code: &str) -> (String, String) {
    err(&format!("{F0}.{suffix}"), code)
}

#[test]
fn parses_a_full_condition() {
    let c = ok(json!({
        "logic": "or",
        "groups": [
            {"filters": [
                {"field": "email", "operator": "contains", "value": "@example.com"},
                {"field": "data.plan", "operator": "equals", "value": "gold"},
                {"field": "createdAt", "operator": "within", "value": 7, "unit": "DAYS"},
            ]},
            {"filters": [], "conditions": {"groups": [
                {"filters": [{"field": "segment.s1", "operator": "notMemberOfSegment"}]}
            ]}},
            {}
        ]
    }));
    assert_eq!(c.logic, Logic::Or);
    assert_eq!(c.groups.len(), 3);
    assert_eq!(c.groups[0].filters[2].unit, Some(TimeUnit::Days));
    assert_eq!(c.groups[2], Group::default());
    let nested = c.groups[1].conditions.as_deref().expect("nested");
    assert_eq!(nested.logic, Logic::And);
    assert_eq!(
        nested.groups[0].filters[0].field,
        Field::Segment("s1".into())
    );
}

#[test]
fn logic_defaults_to_and_and_accepts_any_case() {
    assert_eq!(ok(json!({"groups": []})).logic, Logic::And);
    assert_eq!(ok(json!({"logic": null, "groups": []})).logic, Logic::And);
    assert_eq!(ok(json!({"logic": "And", "groups": []})).logic, Logic::And);
    assert_eq!(ok(json!({"logic": "OR", "groups": []})).logic, Logic::Or);
}

#[test]
fn refuses_bad_shapes() {
    assert_eq!(errors(json!([])), [err("condition", "invalid_type")]);
    assert_eq!(errors(json!("x")), [err("condition", "invalid_type")]);
    assert_eq!(errors(json!({})), [err("condition.groups", "required")]);
    assert_eq!(
        errors(json!({"logic": "XOR", "groups": {}})),
        [
            err("condition.logic", "invalid_value"),
            err("condition.groups", "invalid_type")
        ]
    );
    assert_eq!(
        errors(json!({"logic": 1, "groups": [1, {"filters": "x"}, {"conditions": 3}]})),
        [
            err("condition.logic", "invalid_type"),
            err("condition.groups.0", "invalid_type"),
            err("condition.groups.1.filters", "invalid_type"),
            err("condition.groups.2.conditions", "invalid_type"),
        ]
    );
    assert_eq!(
        errors(json!({"groups": [{"filters": [7]}]})),
        [err(F0, "invalid_type")]
    );
}

#[test]
fn empty_path_names_the_root_condition() {
    let e = parse_condition(&json!(null), "").expect_err("refused");
    assert_eq!(e[0].field, "condition");
    let e = parse_condition(&json!({"groups": [{"filters": [{}]}]}), "").expect_err("refused");
    assert_eq!(e[0].field, "groups.0.filters.0.field");
}

#[test]
fn refuses_missing_and_unknown_fields_and_operators() {
    assert_eq!(
        filter_errors(json!({})),
        [at("field", "required"), at("operator", "required")]
    );
    assert_eq!(
        filter_errors(json!({"field": 1, "operator": false})),
        [at("field", "invalid_type"), at("operator", "invalid_type")]
    );
    for field in [
        "name",
        "data",
        "data.",
        "data.a..b",
        "event.",
        "email.read",
        "segment",
        "segment.",
        "Email",
    ] {
        assert_eq!(
            filter_errors(json!({"field": field, "operator": "exists"})),
            [at("field", "unknown_field")],
            "{field}"
        );
    }
    assert_eq!(
        filter_errors(json!({"field": "email", "operator": "like", "value": "x"})),
        [at("operator", "unknown_operator")]
    );
    assert_eq!(
        filter_errors(json!({"field": "email", "operator": "Equals", "value": "x"})),
        [at("operator", "unknown_operator")]
    );
}

#[test]
fn refuses_operators_that_do_not_fit_the_field() {
    let refused = [
        ("email", "within"),
        ("email", "exists"),
        ("email", "greaterThan"),
        ("subscribed", "contains"),
        ("createdAt", "equals"),
        ("createdAt", "exists"),
        ("data.x", "triggered"),
        ("data.x", "memberOfSegment"),
        ("event.x", "contains"),
        ("event.x", "within"),
        ("event.x", "exists"),
        ("email.opened", "greaterThan"),
        ("segment.s", "equals"),
        ("segment.s", "triggered"),
    ];
    for (field, operator) in refused {
        assert_eq!(
            filter_errors(
                json!({"field": field, "operator": operator, "value": 1, "unit": "days"})
            ),
            [at("operator", "operator_not_allowed")],
            "{field} {operator}"
        );
    }
}

#[test]
fn every_allowed_pair_parses_with_a_suitable_value() {
    for (field, kind) in [
        ("email", FieldKind::Email),
        ("subscribed", FieldKind::Subscribed),
        ("updatedAt", FieldKind::Timestamp),
        ("data.a.b", FieldKind::Data),
        ("event.order.placed", FieldKind::Occurrence),
        ("email.bounced", FieldKind::Occurrence),
        ("segment.s", FieldKind::Segment),
    ] {
        for op in Operator::ALL.into_iter().filter(|o| o.allowed_for(kind)) {
            let value = match (kind, op) {
                (_, o) if o.uses_time() => json!(2),
                (FieldKind::Subscribed, _) => json!(true),
                (FieldKind::Timestamp, _) => json!("2024-01-01T00:00:00Z"),
                (
                    FieldKind::Data,
                    Operator::GreaterThan
                    | Operator::LessThan
                    | Operator::GreaterThanOrEqual
                    | Operator::LessThanOrEqual,
                ) => json!(3.5),
                _ => json!("x"),
            };
            let c = ok(one_filter(
                json!({"field": field, "operator": op.as_str(), "value": value, "unit": "hours"}),
            ));
            let f = &c.groups[0].filters[0];
            assert_eq!((f.field.to_string().as_str(), f.op), (field, op));
            assert_eq!(f.unit.is_some(), op.uses_time(), "{field} {op}");
            assert_eq!(f.value.is_none(), op.takes_no_value(), "{field} {op}");
        }
    }
}

#[test]
fn requires_values_of_the_right_type() {
    let cases = [
        (json!({"field": "email", "operator": "equals"}), "required"),
        (
            json!({"field": "email", "operator": "equals", "value": null}),
            "required",
        ),
        (
            json!({"field": "email", "operator": "contains", "value": 3}),
            "invalid_type",
        ),
        (
            json!({"field": "subscribed", "operator": "equals", "value": "true"}),
            "invalid_type",
        ),
        (
            json!({"field": "data.x", "operator": "equals", "value": [1]}),
            "invalid_type",
        ),
        (
            json!({"field": "data.x", "operator": "notContains", "value": {}}),
            "invalid_type",
        ),
        (
            json!({"field": "data.x", "operator": "greaterThan", "value": true}),
            "invalid_type",
        ),
        (
            json!({"field": "data.x", "operator": "lessThan", "value": "ten"}),
            "invalid_value",
        ),
        (
            json!({"field": "createdAt", "operator": "greaterThan", "value": 5}),
            "invalid_type",
        ),
        (
            json!({"field": "createdAt", "operator": "lessThanOrEqual", "value": "2024-01-01"}),
            "invalid_value",
        ),
        (
            json!({"field": "event.x", "operator": "equals", "value": "yes"}),
            "invalid_type",
        ),
        (
            json!({"field": "email.opened", "operator": "equals"}),
            "required",
        ),
    ];
    for (filter, code) in cases {
        assert_eq!(
            filter_errors(filter.clone()),
            [at("value", code)],
            "{filter}"
        );
    }
}

#[test]
fn time_windows_need_a_positive_value_and_a_unit() {
    let f = |value: Value, unit: Value| json!({"field": "event.x", "operator": "triggeredWithin", "value": value, "unit": unit});
    assert_eq!(
        filter_errors(f(json!(1), json!(null))),
        [at("unit", "required")]
    );
    assert_eq!(
        filter_errors(f(json!(1), json!("weeks"))),
        [at("unit", "invalid_value")]
    );
    assert_eq!(
        filter_errors(f(json!(1), json!(3))),
        [at("unit", "invalid_type")]
    );
    assert_eq!(
        filter_errors(f(json!(null), json!("days"))),
        [at("value", "required")]
    );
    assert_eq!(
        filter_errors(f(json!("3"), json!("days"))),
        [at("value", "invalid_type")]
    );
    assert_eq!(
        filter_errors(f(json!(0), json!("days"))),
        [at("value", "out_of_range")]
    );
    assert_eq!(
        filter_errors(f(json!(-2), json!("days"))),
        [at("value", "out_of_range")]
    );
    assert_eq!(
        filter_errors(f(json!(36_501), json!("days"))),
        [at("value", "out_of_range")]
    );
    assert_eq!(
        filter_errors(f(json!(0), json!("weeks"))),
        [at("unit", "invalid_value"), at("value", "out_of_range")]
    );
    for op in ["within", "olderThan"] {
        assert_eq!(
            filter_errors(json!({"field": "data.d", "operator": op, "value": 2})),
            [at("unit", "required")]
        );
    }
    let c = ok(one_filter(f(json!(1.5), json!("Minutes"))));
    assert_eq!(c.groups[0].filters[0].value, Some(json!(1.5)));
    assert_eq!(c.groups[0].filters[0].unit, Some(TimeUnit::Minutes));
}

#[test]
fn unused_value_and_unit_are_dropped() {
    let c = ok(one_filter(
        json!({"field": "data.x", "operator": "exists", "value": "", "unit": "weeks"}),
    ));
    assert_eq!(c.groups[0].filters[0].value, None);
    assert_eq!(c.groups[0].filters[0].unit, None);
    let c = ok(one_filter(
        json!({"field": "data.x", "operator": "equals", "value": 1, "unit": "days"}),
    ));
    assert_eq!(c.groups[0].filters[0].unit, None);
}

#[test]
fn event_equals_shorthand_means_triggered() {
    let op = |field: &str, operator: &str, value: bool| {
        ok(one_filter(
            json!({"field": field, "operator": operator, "value": value}),
        ))
        .groups[0]
            .filters[0]
            .clone()
    };
    let f = op("event.signup", "equals", true);
    assert_eq!(
        (f.field, f.op, f.value),
        (Field::Event("signup".into()), Operator::Triggered, None)
    );
    assert_eq!(
        op("event.signup", "equals", false).op,
        Operator::NotTriggered
    );
    assert_eq!(
        op("event.signup", "notEquals", true).op,
        Operator::NotTriggered
    );
    assert_eq!(
        op("event.signup", "notEquals", false).op,
        Operator::Triggered
    );
    let f = op("email.clicked", "equals", true);
    assert_eq!(
        (f.field, f.op),
        (Field::EmailActivity(Activity::Clicked), Operator::Triggered)
    );
}

fn nested(depth: usize) -> Value {
    let mut c = json!({"groups": [{"filters": [{"field": "data.x", "operator": "exists"}]}]});
    for _ in 1..depth {
        c = json!({"groups": [{"conditions": c}]});
    }
    c
}

#[test]
fn nesting_stops_at_five_levels() {
    let c = ok(nested(MAX_DEPTH));
    assert_eq!(c.groups.len(), 1);
    let path = format!("condition{}", ".groups.0.conditions".repeat(MAX_DEPTH));
    assert_eq!(errors(nested(MAX_DEPTH + 1)), [err(&path, "too_deep")]);
    assert_eq!(errors(nested(MAX_DEPTH + 4)), [err(&path, "too_deep")]);
}

#[test]
fn at_most_a_hundred_filters() {
    let filter = json!({"field": "subscribed", "operator": "equals", "value": true});
    let split = |a: usize, b: usize| {
        json!({"groups": [
            {"filters": vec![filter.clone(); a]},
            {"conditions": {"groups": [{"filters": vec![filter.clone(); b]}]}}
        ]})
    };
    ok(split(60, 40));
    assert_eq!(
        errors(split(60, 41)),
        [err("condition", "too_many_filters")]
    );
    // Too many are refused before the filters are read: one error, however broken they
    // are (a million empty filters used to become two million errors).
    let mut c = split(100, 0);
    c["groups"][0]["filters"][3] = json!({"field": "nope", "operator": "equals"});
    c["groups"][1]["conditions"]["groups"][0]["filters"] = json!([{}]);
    assert_eq!(errors(c), [err("condition", "too_many_filters")]);
    let flood = json!({"groups": [{"filters": vec![json!({}); 1_000_000]}]});
    assert_eq!(errors(flood), [err("condition", "too_many_filters")]);
    // Groups count on their own: an empty group holds no filter but is a group to walk.
    let groups = |n: usize| json!({"groups": vec![json!({}); n]});
    ok(groups(MAX_FILTERS));
    assert_eq!(
        errors(groups(MAX_FILTERS + 1)),
        [err("condition", "too_many_filters")]
    );
}

#[test]
fn reports_every_problem_at_once() {
    let e = errors(json!({"logic": "nand", "groups": [
        {"filters": [
            {"field": "email", "operator": "within", "value": 1, "unit": "days"},
            {"field": "data.score", "operator": "greaterThan"},
            {"field": "event.x", "operator": "triggeredOlderThan", "value": 2, "unit": "fortnights"},
        ]},
        {"filters": [{"field": "segment", "operator": "memberOfSegment", "value": "s1"}]}
    ]}));
    let fields: Vec<&str> = e.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        fields,
        [
            "condition.logic",
            "condition.groups.0.filters.0.operator",
            "condition.groups.0.filters.1.value",
            "condition.groups.0.filters.2.unit",
            "condition.groups.1.filters.0.field",
        ]
    );
}

#[test]
fn referenced_segments_and_time_use() {
    let c = ok(json!({"groups": [
        {"filters": [
            {"field": "segment.b", "operator": "memberOfSegment"},
            {"field": "segment.a", "operator": "notMemberOfSegment"},
        ], "conditions": {"groups": [{"filters": [
            {"field": "segment.b", "operator": "notMemberOfSegment"},
            {"field": "event.x", "operator": "triggered"},
        ]}]}}
    ]}));
    assert_eq!(referenced_segments(&c), ["b", "a"]);
    assert!(!uses_time(&c));
    assert!(referenced_segments(&Condition::default()).is_empty());
    for (op, timed) in [
        ("triggered", false),
        ("notTriggered", false),
        ("triggeredWithin", true),
        ("notTriggeredWithin", true),
        ("triggeredOlderThan", true),
    ] {
        let nested = json!({"groups": [{"conditions": one_filter(json!({"field": "email.sent", "operator": op, "value": 1, "unit": "days"}))}]});
        assert_eq!(uses_time(&ok(nested)), timed, "{op}");
    }
    for op in ["within", "olderThan"] {
        assert!(uses_time(&ok(one_filter(
            json!({"field": "updatedAt", "operator": op, "value": 1, "unit": "days"})
        ))));
    }
    assert!(!uses_time(&ok(one_filter(
        json!({"field": "updatedAt", "operator": "greaterThan", "value": "2024-01-01T00:00:00Z"})
    ))));
}

/// Arbitrary JSON, biased towards the keys and words of the condition language so that
/// deep parser paths are reached.
fn arb_json() -> impl Strategy<Value = Value> {
    let word = prop_oneof![
        Just("AND".to_string()),
        Just("or".to_string()),
        Just("days".to_string()),
        Just("2024-01-01T00:00:00Z".to_string()),
        prop::sample::select(vec![
            "email",
            "subscribed",
            "createdAt",
            "data.a",
            "data.a.b",
            "event.x",
            "email.opened",
            "segment.s",
            "segment"
        ])
        .prop_map(str::to_string),
        prop::sample::select(Operator::ALL.to_vec()).prop_map(|o| o.as_str().to_string()),
        "\\PC{0,12}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        (-5i64..100_000).prop_map(Value::from),
        word.prop_map(Value::String),
    ];
    let key = prop_oneof![
        prop::sample::select(vec![
            "logic",
            "groups",
            "filters",
            "conditions",
            "field",
            "operator",
            "value",
            "unit"
        ])
        .prop_map(str::to_string),
        "[a-z]{0,6}",
    ];
    leaf.prop_recursive(8, 200, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Replaces a random part of `value`, about `depth` levels down, with `junk`.
fn damage(value: &mut Value, rng: &mut StdRng, depth: usize, junk: Value) {
    use rand::Rng;
    let child = match value {
        Value::Array(items) if depth > 0 && !items.is_empty() => {
            let i = rng.gen_range(0..items.len());
            items.get_mut(i)
        }
        Value::Object(map) if depth > 0 && !map.is_empty() => {
            let i = rng.gen_range(0..map.len());
            map.values_mut().nth(i)
        }
        _ => None,
    };
    match child {
        Some(child) => damage(child, rng, depth - 1, junk),
        None => *value = junk,
    }
}

fn now() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 6, 1, 12, 0, 0)
        .single()
        .expect("valid date")
}

proptest! {
    #[test]
    fn never_panics(value in arb_json()) {
        match parse_condition(&value, "condition") {
            Ok(c) => {
                // Whatever parses serializes to something that parses to the same thing.
                prop_assert_eq!(parse_condition(&c.to_json(), "condition"), Ok(c));
            }
            Err(errors) => {
                prop_assert!(!errors.is_empty());
                prop_assert!(errors.iter().all(|e| e.field.starts_with("condition")));
            }
        }
    }

    #[test]
    fn never_panics_on_damaged_conditions(seed in any::<u64>(), junk in arb_json(), depth in 0usize..12) {
        // A valid condition with one part replaced by arbitrary JSON reaches deep paths.
        let mut rng = StdRng::seed_from_u64(seed);
        let mut value = generate::condition(&mut rng, now()).to_json();
        damage(&mut value, &mut rng, depth, junk);
        if let Err(errors) = parse_condition(&value, "condition") {
            prop_assert!(errors.iter().all(|e| e.field.starts_with("condition")));
        }
    }

    #[test]
    fn generated_conditions_round_trip(seed in any::<u64>()) {
        let mut rng = StdRng::seed_from_u64(seed);
        let c = generate::condition(&mut rng, now());
        let text = serde_json::to_string(&c).expect("serializes");
        let back: Value = serde_json::from_str(&text).expect("valid JSON");
        prop_assert_eq!(parse_condition(&back, "condition"), Ok(c));
    }
}

#[test]
fn email_values_name_domains_in_a_label_form() {
    for (given, kept) in [
        ("x@Bücher.de", "x@xn--bcher-kva.de"),
        ("@bücher.de", "@xn--bcher-kva.de"),
        ("bücher", "bücher"),
        ("@example.com", "@example.com"),
    ] {
        let c = ok(one_filter(
            json!({"field": "email", "operator": "contains", "value": given}),
        ));
        assert_eq!(c.groups[0].filters[0].value, Some(json!(kept)), "{given}");
    }
}
