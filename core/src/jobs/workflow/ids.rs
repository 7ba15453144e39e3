//! Execution ids derived from what started them, so a dispatch or tick that runs twice
//! (a crash before its job was settled) finds its executions already made.

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use crate::model::ExecutionId;

/// A UUIDv7 whose time is `at` and whose other bits are a hash of `parts`: time-ordered like
/// every Posthorn id, and the same for the same inputs.
pub fn derived_id(at: DateTime<Utc>, parts: &[&str]) -> ExecutionId {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update(part.as_bytes());
        hash.update([0u8]);
    }
    let digest = hash.finalize();
    let mut bytes = [0u8; 10];
    bytes.copy_from_slice(&digest[..10]);
    let millis = u64::try_from(at.timestamp_millis()).unwrap_or(0);
    uuid::Builder::from_unix_timestamp_millis(millis, &bytes)
        .into_uuid()
        .to_string()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_inputs_give_the_same_id() {
        let at = Utc::now();
        assert_eq!(derived_id(at, &["e", "w"]), derived_id(at, &["e", "w"]));
        assert_ne!(derived_id(at, &["e", "w"]), derived_id(at, &["ew", ""]));
        assert_eq!(
            uuid::Uuid::parse_str(derived_id(at, &["x"]).as_str())
                .map(|u| u.get_version_num())
                .ok(),
            Some(7)
        );
    }
}
