//! The trigger kind of a [`Trigger`] and the error of a SCHEDULE trigger's unknown segment.

use super::TriggerType;
use crate::error::Error;
use crate::workflow::Trigger;

/// The kind of a trigger.
pub fn trigger_type(trigger: &Trigger) -> TriggerType {
    match trigger {
        Trigger::Event { .. } => TriggerType::Event,
        Trigger::Manual {} => TriggerType::Manual,
        Trigger::Schedule { .. } => TriggerType::Schedule,
    }
}

/// The field error of a SCHEDULE trigger whose segment does not exist.
pub fn unknown_segment() -> Error {
    Error::field(
        "triggerConfig.segmentId",
        "not_found",
        "no segment with this id in the workspace",
    )
}
