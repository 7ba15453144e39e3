//! The typed segment condition: what `parse_condition` produces and `matches` evaluates.
//!
//! Serializing a condition gives back the API shape
//! (`{logic, groups: [{filters: [{field, operator, value?, unit?}], conditions?}]}`), and
//! parsing that again yields an equal condition.

use std::fmt;

use chrono::{DateTime, Duration, Utc};
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::model::SegmentId;

/// How the groups of a condition combine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Logic {
    /// Every group must match (the default).
    #[default]
    And,
    /// At least one group must match.
    Or,
}

/// A segment condition. An empty `groups` list matches every contact, whatever `logic` is.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Condition {
    /// How `groups` combine.
    pub logic: Logic,
    /// The groups; empty means "every contact".
    pub groups: Vec<Group>,
}

/// A group: all of its filters AND its nested condition must match; an empty group matches.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Group {
    /// Filters, ANDed.
    pub filters: Vec<Filter>,
    /// A nested condition, ANDed with the filters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Box<Condition>>,
}

/// One test on a contact.
///
/// `parse_condition` guarantees the invariants documented on [`Operator`]: the operator
/// fits the field, `value` is present exactly when the operator takes one and has the
/// required type, and `unit` is present exactly for the time-window operators.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Filter {
    /// What is tested.
    pub field: Field,
    /// How it is tested.
    #[serde(rename = "operator")]
    pub op: Operator,
    /// The operand, for operators that take one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// The unit of a time window (`within`, `olderThan`, `triggeredWithin`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<TimeUnit>,
}

/// Email activity recorded for a contact (`email.<activity>` fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Activity {
    /// The transport accepted a message to the contact.
    Sent,
    /// The provider reported delivery.
    Delivered,
    /// The contact opened a message.
    Opened,
    /// The contact clicked a link.
    Clicked,
    /// A message bounced.
    Bounced,
    /// The contact complained (marked as spam).
    Complained,
}

impl Activity {
    /// Every activity, in a fixed order.
    pub const ALL: [Activity; 6] = [
        Activity::Sent,
        Activity::Delivered,
        Activity::Opened,
        Activity::Clicked,
        Activity::Bounced,
        Activity::Complained,
    ];

    /// The name used in field paths (`opened`).
    pub fn as_str(self) -> &'static str {
        match self {
            Activity::Sent => "sent",
            Activity::Delivered => "delivered",
            Activity::Opened => "opened",
            Activity::Clicked => "clicked",
            Activity::Bounced => "bounced",
            Activity::Complained => "complained",
        }
    }

    /// The activity named `name` (exact, lower-case).
    pub fn parse(name: &str) -> Option<Activity> {
        Activity::ALL.into_iter().find(|a| a.as_str() == name)
    }
}

/// What a filter looks at.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Field {
    /// `email`: the contact's (lower-case) address.
    Email,
    /// `subscribed`: the contact's subscription flag.
    Subscribed,
    /// `createdAt`: when the contact was created.
    CreatedAt,
    /// `updatedAt`: when the contact last changed.
    UpdatedAt,
    /// `data.<a>.<b>`: a value in the contact's custom data, by object keys (never empty).
    Data(Vec<String>),
    /// `event.<name>`: the contact's events with exactly this name (may contain dots).
    Event(String),
    /// `email.<activity>`: the contact's email activity of this kind.
    EmailActivity(Activity),
    /// `segment.<id>`: membership of the segment with this id.
    Segment(SegmentId),
}

impl Field {
    /// Reads a field path; `None` when it names no field (`data.` and `event.` need a
    /// non-empty rest, `data` paths have no empty keys).
    pub fn parse(raw: &str) -> Option<Field> {
        match raw {
            "email" => return Some(Field::Email),
            "subscribed" => return Some(Field::Subscribed),
            "createdAt" => return Some(Field::CreatedAt),
            "updatedAt" => return Some(Field::UpdatedAt),
            _ => {}
        }
        if let Some(path) = raw.strip_prefix("data.") {
            let keys: Vec<String> = path.split('.').map(str::to_string).collect();
            return (!keys.iter().any(String::is_empty)).then_some(Field::Data(keys));
        }
        if let Some(name) = raw.strip_prefix("event.") {
            return (!name.is_empty()).then(|| Field::Event(name.to_string()));
        }
        if let Some(activity) = raw.strip_prefix("email.") {
            return Activity::parse(activity).map(Field::EmailActivity);
        }
        if let Some(id) = raw.strip_prefix("segment.") {
            return (!id.is_empty()).then(|| Field::Segment(SegmentId::from(id)));
        }
        None
    }

    /// The kind of field, which decides the operators it accepts.
    pub fn kind(&self) -> FieldKind {
        match self {
            Field::Email => FieldKind::Email,
            Field::Subscribed => FieldKind::Subscribed,
            Field::CreatedAt | Field::UpdatedAt => FieldKind::Timestamp,
            Field::Data(_) => FieldKind::Data,
            Field::Event(_) | Field::EmailActivity(_) => FieldKind::Occurrence,
            Field::Segment(_) => FieldKind::Segment,
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Field::Email => f.write_str("email"),
            Field::Subscribed => f.write_str("subscribed"),
            Field::CreatedAt => f.write_str("createdAt"),
            Field::UpdatedAt => f.write_str("updatedAt"),
            Field::Data(keys) => write!(f, "data.{}", keys.join(".")),
            Field::Event(name) => write!(f, "event.{name}"),
            Field::EmailActivity(a) => write!(f, "email.{}", a.as_str()),
            Field::Segment(id) => write!(f, "segment.{id}"),
        }
    }
}

impl Serialize for Field {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Groups of fields that accept the same operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldKind {
    /// `email`.
    Email,
    /// `subscribed`.
    Subscribed,
    /// `createdAt`, `updatedAt`.
    Timestamp,
    /// `data.<path>`.
    Data,
    /// `event.<name>`, `email.<activity>`: things that happen at a time.
    Occurrence,
    /// `segment.<id>`.
    Segment,
}

/// How a filter tests its field.
///
/// | operator | fields | value |
/// |---|---|---|
/// | `equals`, `notEquals` | `email` | string |
/// | | `subscribed` | boolean |
/// | | `data.*` | string, number or boolean |
/// | `contains`, `notContains` | `email` | string |
/// | | `data.*` | string, number or boolean |
/// | `greaterThan`, `lessThan`, `greaterThanOrEqual`, `lessThanOrEqual` | `createdAt`, `updatedAt` | timestamp string |
/// | | `data.*` | number or timestamp string |
/// | `exists`, `notExists` | `data.*` | none |
/// | `within`, `olderThan` | `createdAt`, `updatedAt`, `data.*` | positive number + `unit` |
/// | `triggered`, `notTriggered` | `event.*`, `email.*` | none |
/// | `triggeredWithin`, `notTriggeredWithin`, `triggeredOlderThan` | `event.*`, `email.*` | positive number + `unit` |
/// | `memberOfSegment`, `notMemberOfSegment` | `segment.<id>` | none |
///
/// "Timestamp string" is defined by [`super::parse_timestamp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Operator {
    /// Equal to the value.
    Equals,
    /// Not equal to the value (exactly `!equals`).
    NotEquals,
    /// Substring (strings) or element (arrays).
    Contains,
    /// Exactly `!contains`.
    NotContains,
    /// Above the value.
    GreaterThan,
    /// Below the value.
    LessThan,
    /// At or above the value.
    GreaterThanOrEqual,
    /// At or below the value.
    LessThanOrEqual,
    /// The data path holds a non-null value.
    Exists,
    /// Exactly `!exists`.
    NotExists,
    /// The timestamp is at or after `now - value unit`.
    Within,
    /// The timestamp is before `now - value unit`.
    OlderThan,
    /// At least one occurrence.
    Triggered,
    /// No occurrence.
    NotTriggered,
    /// At least one occurrence at or after `now - value unit`.
    TriggeredWithin,
    /// No occurrence at or after `now - value unit`.
    NotTriggeredWithin,
    /// At least one occurrence before `now - value unit`.
    TriggeredOlderThan,
    /// The contact is a member of the segment.
    MemberOfSegment,
    /// The contact is not a member of the segment.
    NotMemberOfSegment,
}

impl Operator {
    /// Every operator, in a fixed order.
    pub const ALL: [Operator; 19] = [
        Operator::Equals,
        Operator::NotEquals,
        Operator::Contains,
        Operator::NotContains,
        Operator::GreaterThan,
        Operator::LessThan,
        Operator::GreaterThanOrEqual,
        Operator::LessThanOrEqual,
        Operator::Exists,
        Operator::NotExists,
        Operator::Within,
        Operator::OlderThan,
        Operator::Triggered,
        Operator::NotTriggered,
        Operator::TriggeredWithin,
        Operator::NotTriggeredWithin,
        Operator::TriggeredOlderThan,
        Operator::MemberOfSegment,
        Operator::NotMemberOfSegment,
    ];

    /// The API name (`greaterThanOrEqual`).
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::Equals => "equals",
            Operator::NotEquals => "notEquals",
            Operator::Contains => "contains",
            Operator::NotContains => "notContains",
            Operator::GreaterThan => "greaterThan",
            Operator::LessThan => "lessThan",
            Operator::GreaterThanOrEqual => "greaterThanOrEqual",
            Operator::LessThanOrEqual => "lessThanOrEqual",
            Operator::Exists => "exists",
            Operator::NotExists => "notExists",
            Operator::Within => "within",
            Operator::OlderThan => "olderThan",
            Operator::Triggered => "triggered",
            Operator::NotTriggered => "notTriggered",
            Operator::TriggeredWithin => "triggeredWithin",
            Operator::NotTriggeredWithin => "notTriggeredWithin",
            Operator::TriggeredOlderThan => "triggeredOlderThan",
            Operator::MemberOfSegment => "memberOfSegment",
            Operator::NotMemberOfSegment => "notMemberOfSegment",
        }
    }

    /// The operator with this API name (exact, case-sensitive).
    pub fn parse(name: &str) -> Option<Operator> {
        Operator::ALL.into_iter().find(|o| o.as_str() == name)
    }

    /// Whether the operator compares against `now` and so can change with time alone.
    pub fn uses_time(self) -> bool {
        matches!(
            self,
            Operator::Within
                | Operator::OlderThan
                | Operator::TriggeredWithin
                | Operator::NotTriggeredWithin
                | Operator::TriggeredOlderThan
        )
    }

    /// Whether the operator fits fields of this kind (see the table on [`Operator`]).
    pub fn allowed_for(self, kind: FieldKind) -> bool {
        use Operator as O;
        match kind {
            FieldKind::Email => matches!(
                self,
                O::Equals | O::NotEquals | O::Contains | O::NotContains
            ),
            FieldKind::Subscribed => matches!(self, O::Equals | O::NotEquals),
            FieldKind::Timestamp => matches!(
                self,
                O::GreaterThan
                    | O::LessThan
                    | O::GreaterThanOrEqual
                    | O::LessThanOrEqual
                    | O::Within
                    | O::OlderThan
            ),
            FieldKind::Data => matches!(
                self,
                O::Equals
                    | O::NotEquals
                    | O::Contains
                    | O::NotContains
                    | O::GreaterThan
                    | O::LessThan
                    | O::GreaterThanOrEqual
                    | O::LessThanOrEqual
                    | O::Exists
                    | O::NotExists
                    | O::Within
                    | O::OlderThan
            ),
            FieldKind::Occurrence => matches!(
                self,
                O::Triggered
                    | O::NotTriggered
                    | O::TriggeredWithin
                    | O::NotTriggeredWithin
                    | O::TriggeredOlderThan
            ),
            FieldKind::Segment => matches!(self, O::MemberOfSegment | O::NotMemberOfSegment),
        }
    }

    /// Whether the operator takes no `value`.
    pub fn takes_no_value(self) -> bool {
        matches!(
            self,
            Operator::Exists
                | Operator::NotExists
                | Operator::Triggered
                | Operator::NotTriggered
                | Operator::MemberOfSegment
                | Operator::NotMemberOfSegment
        )
    }
}

/// What a filter's `value` must be for an operator on a kind of field (see the table on
/// [`Operator`]); `parse_condition` applies exactly this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operand {
    /// No value; a `value` or `unit` given is ignored.
    None,
    /// `true` or `false` (`subscribed`, and the `equals true|false` shorthand of
    /// `event.*` and `email.*`).
    Boolean,
    /// A string (`email`).
    String,
    /// A string, number or boolean (`data.*` equality and containment).
    Scalar,
    /// A timestamp string (`createdAt`, `updatedAt` comparisons).
    Timestamp,
    /// A number or a timestamp string (`data.*` comparisons).
    NumberOrTimestamp,
    /// A positive number with a `unit`, at most 36,500 days in all (time windows).
    Window,
}

impl Operator {
    /// The operand this operator takes on fields of `kind`; `None` when it does not fit
    /// that kind (`operator_not_allowed`). `equals` and `notEquals` fit `event.*` and
    /// `email.*` as the boolean shorthand of `triggered` and `notTriggered`.
    pub fn operand(self, kind: FieldKind) -> Option<Operand> {
        use Operator as O;
        if kind == FieldKind::Occurrence && matches!(self, O::Equals | O::NotEquals) {
            return Some(Operand::Boolean);
        }
        if !self.allowed_for(kind) {
            return None;
        }
        Some(if self.takes_no_value() {
            Operand::None
        } else if self.uses_time() {
            Operand::Window
        } else {
            match (self, kind) {
                (_, FieldKind::Subscribed) => Operand::Boolean,
                (_, FieldKind::Email) => Operand::String,
                (O::Equals | O::NotEquals | O::Contains | O::NotContains, _) => Operand::Scalar,
                (_, FieldKind::Timestamp) => Operand::Timestamp,
                _ => Operand::NumberOrTimestamp,
            }
        })
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The unit of a time window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeUnit {
    /// 60 seconds.
    Minutes,
    /// 3,600 seconds.
    Hours,
    /// 86,400 seconds (calendar and daylight saving time are ignored).
    Days,
}

impl TimeUnit {
    /// Every unit.
    pub const ALL: [TimeUnit; 3] = [TimeUnit::Minutes, TimeUnit::Hours, TimeUnit::Days];

    /// The API name (`days`).
    pub fn as_str(self) -> &'static str {
        match self {
            TimeUnit::Minutes => "minutes",
            TimeUnit::Hours => "hours",
            TimeUnit::Days => "days",
        }
    }

    /// The unit with this name, ignoring case.
    pub fn parse(name: &str) -> Option<TimeUnit> {
        TimeUnit::ALL
            .into_iter()
            .find(|u| u.as_str().eq_ignore_ascii_case(name))
    }

    /// Seconds in one unit.
    pub fn seconds(self) -> i64 {
        match self {
            TimeUnit::Minutes => 60,
            TimeUnit::Hours => 3_600,
            TimeUnit::Days => 86_400,
        }
    }
}

/// The longest time window a filter may use: 36,500 days.
pub const MAX_WINDOW_SECONDS: f64 = 36_500.0 * 86_400.0;

impl Filter {
    /// The length of a time window (`value` × `unit`), rounded to whole milliseconds;
    /// `None` unless `value` is a positive number of at most [`MAX_WINDOW_SECONDS`] and
    /// `unit` is set.
    pub fn window(&self) -> Option<Duration> {
        let amount = self.value.as_ref()?.as_f64()?;
        let seconds = amount * self.unit?.seconds() as f64;
        if !(seconds > 0.0 && seconds <= MAX_WINDOW_SECONDS) {
            return None;
        }
        Some(Duration::milliseconds((seconds * 1000.0).round() as i64))
    }

    /// The window's boundary, `now - window()`. Adapters bind this value instead of doing
    /// the arithmetic in SQL, so both sides agree to the millisecond.
    pub fn cutoff(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        now.checked_sub_signed(self.window()?)
    }
}

impl Condition {
    /// Calls `visit` on every filter, depth first, in document order.
    pub fn for_each_filter<'a>(&'a self, visit: &mut impl FnMut(&'a Filter)) {
        for group in &self.groups {
            group.filters.iter().for_each(&mut *visit);
            if let Some(nested) = &group.conditions {
                nested.for_each_filter(visit);
            }
        }
    }

    /// The API JSON shape of this condition.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_round_trip_through_text() {
        for raw in [
            "email",
            "subscribed",
            "createdAt",
            "updatedAt",
            "data.plan",
            "data.profile.tier",
            "event.order.placed",
            "email.opened",
            "segment.abc-123",
        ] {
            let field = Field::parse(raw).expect(raw);
            assert_eq!(field.to_string(), raw);
        }
        for bad in [
            "",
            "data",
            "data.",
            "data.a..b",
            "event.",
            "email.read",
            "segment.",
            "Email",
            "x",
        ] {
            assert_eq!(Field::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn operators_round_trip_through_text() {
        for op in Operator::ALL {
            assert_eq!(Operator::parse(op.as_str()), Some(op));
            assert_eq!(serde_json::to_value(op).ok(), Some(json!(op.as_str())));
        }
        assert_eq!(Operator::parse("EQUALS"), None);
    }

    #[test]
    fn serializes_to_the_api_shape() {
        let c = Condition {
            logic: Logic::Or,
            groups: vec![Group {
                filters: vec![
                    Filter {
                        field: Field::Event("signup".into()),
                        op: Operator::TriggeredWithin,
                        value: Some(json!(3)),
                        unit: Some(TimeUnit::Days),
                    },
                    Filter {
                        field: Field::Data(vec!["plan".into()]),
                        op: Operator::Exists,
                        value: None,
                        unit: None,
                    },
                ],
                conditions: Some(Box::default()),
            }],
        };
        assert_eq!(
            c.to_json(),
            json!({"logic": "OR", "groups": [{"filters": [
                {"field": "event.signup", "operator": "triggeredWithin", "value": 3, "unit": "days"},
                {"field": "data.plan", "operator": "exists"}
            ], "conditions": {"logic": "AND", "groups": []}}]})
        );
    }

    #[test]
    fn windows_and_cutoffs() {
        let f = |value: Value, unit| Filter {
            field: Field::CreatedAt,
            op: Operator::Within,
            value: Some(value),
            unit: Some(unit),
        };
        assert_eq!(
            f(json!(2), TimeUnit::Hours).window(),
            Some(Duration::hours(2))
        );
        assert_eq!(
            f(json!(1.5), TimeUnit::Minutes).window(),
            Some(Duration::seconds(90))
        );
        assert_eq!(f(json!(0), TimeUnit::Days).window(), None);
        assert_eq!(f(json!(-1), TimeUnit::Days).window(), None);
        assert_eq!(f(json!(36_501), TimeUnit::Days).window(), None);
        assert_eq!(f(json!("1"), TimeUnit::Days).window(), None);
        let now = Utc::now();
        assert_eq!(
            f(json!(1), TimeUnit::Days).cutoff(now),
            Some(now - Duration::days(1))
        );
    }
}
