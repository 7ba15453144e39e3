//! An event as the memory store keeps it: its data as JSON text.

use posthorn_core::model::Event;
use serde_json::Value;

/// An event with its `data` kept as JSON text.
///
/// A parsed object holds a B-tree node with room for eleven fields (about 640 bytes, for
/// `{"plan":"pro"}` as for ten fields); its text takes a few dozen. Events are written on
/// every `/v1/track` and rarely read back, and a read returns a copy either way.
#[derive(Debug)]
pub(crate) struct StoredEvent {
    /// The event with `data` left `Null`.
    pub(crate) event: Event,
    /// The event's data as JSON text.
    data: Box<str>,
}

impl StoredEvent {
    /// Keeps `event`, its data turned into text.
    pub(crate) fn new(mut event: Event) -> Self {
        let data = std::mem::take(&mut event.data);
        // A `Value` always serializes: its object keys are strings.
        let data = serde_json::to_string(&data).unwrap_or_else(|_| "null".to_string());
        Self {
            event,
            data: data.into_boxed_str(),
        }
    }

    /// A copy of the event with its data parsed again.
    pub(crate) fn to_event(&self) -> Event {
        let mut event = self.event.clone();
        event.data = self.data();
        event
    }

    /// The event with its data parsed again.
    pub(crate) fn into_event(self) -> Event {
        let data = self.data();
        Event { data, ..self.event }
    }

    fn data(&self) -> Value {
        // `new` wrote the text from a `Value`, so it parses.
        serde_json::from_str(&self.data).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use posthorn_core::model::{ContactId, WorkspaceId};
    use posthorn_core::ports::ManualClock;
    use serde_json::json;

    use super::*;

    #[test]
    fn an_event_comes_back_as_it_was_kept() {
        let clock = ManualClock::new(Utc::now());
        let data = json!({"plan": "pro", "seats": 3, "tags": ["a", {"b": null}], "n": 1.5e300});
        let event = Event::new(
            &clock,
            &WorkspaceId::from("ws"),
            "upgraded",
            data,
            Some(ContactId::from("c")),
            None,
            Utc::now(),
        );
        let stored = StoredEvent::new(event.clone());
        assert_eq!(stored.event.data, Value::Null);
        assert_eq!(stored.to_event(), event);
        assert_eq!(stored.into_event(), event);
    }
}
