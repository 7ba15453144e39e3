//! `POST /v1/track` and `POST /v1/verify` bodies into their typed commands.

use posthorn_core::app::track::TrackEvent;
use posthorn_core::app::verify::Verify;
use posthorn_core::model::EventName;
use posthorn_core::validate::Checker;
use posthorn_core::{Error, Result};
use serde_json::Value;

/// Parses a `POST /v1/track` body; every failing field is reported at once.
pub fn track_event(body: &Value) -> Result<TrackEvent> {
    let obj = Checker::body(body)?;
    let mut c = Checker::new();
    let email = c.email(obj, "email", "", true);
    let event = c.string(obj, "event", "", true).and_then(|raw| {
        EventName::parse_custom(raw)
            .map_err(|e| c.fail("event", "invalid_event", e.to_string()))
            .ok()
    });
    let subscribed = c.boolean(obj, "subscribed", "", false);
    let data = c.object(obj, "data", "", false).cloned();
    c.finish()?;
    let (Some(email), Some(event)) = (email, event) else {
        return Err(Error::Internal("track fields checked above".into()));
    };
    Ok(TrackEvent {
        email,
        event,
        subscribed,
        data,
    })
}

/// Parses a `POST /v1/verify` body.
pub fn verify(body: &Value) -> Result<Verify> {
    let obj = Checker::body(body)?;
    let mut c = Checker::new();
    let email = c.string(obj, "email", "", true).map(str::to_string);
    c.finish()?;
    let email = email.ok_or_else(|| Error::Internal("email checked above".into()))?;
    Ok(Verify { email })
}
