//! The adapter's errors, and their mapping onto the ports' `PortError`.

use posthorn_core::ports::PortError;

/// What can go wrong between this adapter and Redis.
#[derive(Debug, thiserror::Error)]
pub enum RedisAdapterError {
    /// The connection URL does not parse (`redis://[user:password@]host[:port][/db]`).
    #[error("invalid Redis URL: {0}")]
    InvalidUrl(redis::RedisError),
    /// Redis could not be reached, or a command failed.
    #[error("Redis unavailable: {0}")]
    Unavailable(redis::RedisError),
    /// A key under this adapter's prefix holds something this adapter did not write.
    #[error("Redis key {key:?} holds a value not written by Posthorn's Redis adapter")]
    ForeignValue {
        /// The full Redis key, prefix included.
        key: String,
    },
}

impl From<redis::RedisError> for RedisAdapterError {
    fn from(err: redis::RedisError) -> Self {
        Self::Unavailable(err)
    }
}

impl From<RedisAdapterError> for PortError {
    fn from(err: RedisAdapterError) -> Self {
        PortError::Unavailable(err.to_string())
    }
}

/// A failed Redis command as a port error.
pub(crate) fn port(err: redis::RedisError) -> PortError {
    RedisAdapterError::Unavailable(err).into()
}
