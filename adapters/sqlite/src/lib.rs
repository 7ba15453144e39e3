//! Posthorn's `Store` and `Jobs` ports on one SQLite file (sqlx, bundled SQLite): the
//! durable embedded default.
//!
//! One [`SqliteStore`] serves both ports. The file is in WAL mode with **one writer
//! connection**, through which every commit and every job claim is serialized, and a pool
//! of read-only connections that never wait for it. Concurrent commits share transactions
//! (group commit, one WAL sync for many change sets). A change set's jobs are written in
//! the same transaction as its records (a transactional outbox); idle workers are woken
//! in process (one process owns the file: [`SqliteStore::open`] locks it).
//!
//! Commits are durable when they return (`synchronous=FULL`) unless
//! [`Durability::Normal`] is chosen. Segment conditions, keyset pages and searches run in
//! SQL (JSON1 for contact data).

#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod after_commit;
mod batch;
mod commit;
mod contacts;
mod derived;
mod error;
mod group;
mod idempotency;
mod inbound;
mod jobs;
mod matching;
#[cfg(test)]
mod migration_tests;
mod open;
mod options;
#[cfg(test)]
mod plan_tests;
mod point;
mod records;
mod rows;
mod segments;
mod sns;
mod store;
mod suppression_facts;
pub mod testing;
mod wake;
mod workflow_commit;
mod workflow_rows;
mod workflows;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use posthorn_core::ports::StoreError;
use sqlx::SqlitePool;

pub use error::SqliteError;
pub use options::{Durability, SqliteOptions};

/// The SQLite adapter: implements `Store` and `Jobs` on one database file.
///
/// Cheap to clone; clones share the connections, the file lock and the wake-ups. The lock
/// is released when the last clone is dropped.
#[derive(Clone)]
pub struct SqliteStore {
    /// The one connection that writes; `None` when opened read-only.
    writer: Option<SqlitePool>,
    /// Read-only connections for every read.
    readers: SqlitePool,
    wake: Arc<wake::Wake>,
    /// Change sets waiting for the writer, committed together.
    group: Arc<group::Group>,
    /// Facts read on every stored event, kept in memory; only when this store writes.
    derived: Option<Arc<derived::Derived>>,
    /// Lookups by key on the calling thread (a contact by address).
    point: Arc<point::PointReads>,
    path: PathBuf,
    /// The locked `<db>.lock` file, held open while the store lives.
    _lock: Option<Arc<File>>,
    /// The directory of a temporary store, removed when the store is dropped.
    _temp_dir: Option<Arc<tempfile::TempDir>>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .field("read_only", &self.writer.is_none())
            .finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating it and its parent directories if needed) the database at `path`
    /// for reading and writing, applies the migrations, and takes an exclusive lock on
    /// `<path>.lock` for as long as the store lives.
    ///
    /// Fails with [`SqliteError::Locked`] ("another Posthorn server is using `<path>`") when
    /// another store holds that lock, in this process or another. The lock file stays on
    /// disk; only the lock on it counts, and the OS drops that when the process ends, so a
    /// crash never leaves a stale lock behind.
    pub async fn open(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self, SqliteError> {
        open::open(path.as_ref(), &options, None).await
    }

    /// Opens an existing database read-only, without the lock, for tools that run beside a
    /// live server (inspection, [`SqliteStore::backup_to`]). Every read works and sees
    /// what the server has committed; `commit` and the `Jobs` writes fail with
    /// `Unavailable`. Does not migrate: the file must have been opened by
    /// [`SqliteStore::open`] before.
    pub async fn open_read_only(path: impl AsRef<Path>) -> Result<Self, SqliteError> {
        open::open_read_only(path.as_ref(), &SqliteOptions::default()).await
    }

    /// Writes a consistent copy of the database to `dest` (`VACUUM INTO`): a snapshot of
    /// every committed change set, taken without stopping writers. Works on a read-only
    /// store too. Creates `dest`'s parent directories; refuses an existing `dest`
    /// ([`SqliteError::DestinationExists`]).
    pub async fn backup_to(&self, dest: impl AsRef<Path>) -> Result<(), SqliteError> {
        open::backup_to(&self.readers, dest.as_ref()).await
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the store was opened with [`SqliteStore::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.writer.is_none()
    }

    /// Closes every connection (checkpointing the WAL); later operations fail. The lock is
    /// released when the last clone is dropped.
    pub async fn close(&self) {
        if let Some(writer) = &self.writer {
            writer.close().await;
        }
        self.readers.close().await;
    }

    /// The writer's pool for the group committer, or `Unavailable` on a read-only store.
    fn writer(&self) -> Result<&SqlitePool, StoreError> {
        self.writer.as_ref().ok_or_else(error::read_only)
    }

    /// The writer's pool for a statement run on it directly (a job claim, a purge), or
    /// `Unavailable` on a read-only store. While the result lives, the group committer
    /// gives the connection back after each group rather than keep it for its next ones.
    fn direct_writer(&self) -> Result<DirectWriter<'_>, StoreError> {
        Ok(DirectWriter {
            pool: self.writer()?,
            _counted: self.group.direct_use(),
        })
    }
}

/// The writer's pool, borrowed for statements run on it directly (see
/// [`SqliteStore::direct_writer`]).
struct DirectWriter<'s> {
    pool: &'s SqlitePool,
    _counted: group::DirectUse,
}

impl std::ops::Deref for DirectWriter<'_> {
    type Target = SqlitePool;

    fn deref(&self) -> &SqlitePool {
        self.pool
    }
}
