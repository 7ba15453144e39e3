//! How a store file is opened: durability, readers, waiting on locks.

use std::time::Duration;

/// How hard a commit waits for the disk (SQLite's `synchronous` pragma, in WAL mode).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous=FULL`: the WAL is synced on every commit, so a commit that returned is
    /// durable, even across a power failure or an OS crash. The default.
    #[default]
    Full,
    /// `synchronous=NORMAL`: the WAL is synced only at checkpoints, so commits are faster.
    /// A process crash loses nothing (the WAL is in the OS's hands), but a power failure or
    /// an OS crash can lose the last transactions that returned `Ok` (never corrupting the
    /// file). Opt in only when losing the last moments of work on power loss is acceptable.
    Normal,
}

/// Options for [`crate::SqliteStore::open`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteOptions {
    /// Durability of commits (default [`Durability::Full`]).
    pub durability: Durability,
    /// Reader connections kept open beside the one writer (default 4, at least 1).
    pub readers: u32,
    /// How long an operation waits for the database before it fails with `Unavailable`:
    /// for the writer connection (busy with other commits and claims) or a reader, and for
    /// a lock held by another connection (SQLite's `busy_timeout`, so `SQLITE_BUSY` is
    /// waited out, never returned at once). Default 30 s.
    pub busy_timeout: Duration,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            durability: Durability::Full,
            readers: 4,
            busy_timeout: Duration::from_secs(30),
        }
    }
}

impl SqliteOptions {
    /// The defaults with `durability` instead.
    pub fn with_durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }
}
