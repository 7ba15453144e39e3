//! The SQLite store from the server's side: opening it for the one server process that may
//! own the file, and the tools that only read it beside a running server (`posthorn backup`;
//! `posthorn export` is in [`crate::export`]).

use std::path::{Path, PathBuf};

use posthorn_sqlite::{SqliteError, SqliteOptions, SqliteStore};

use crate::compose::ComposeError;
use crate::config::{Config, Role};
use crate::store_spec::StoreSpec;

/// Opens the SQLite store of a server: refuses any role but `all` (one process owns the
/// file) and a file another server holds.
pub async fn open_for_server(config: &Config, path: &Path) -> Result<SqliteStore, ComposeError> {
    match config.role {
        Role::All => {}
        Role::Api => return Err(ComposeError::SqliteRole("api")),
        Role::Worker => return Err(ComposeError::SqliteRole("worker")),
    }
    let options = SqliteOptions::default().with_durability(config.sqlite_synchronous.into());
    SqliteStore::open(path, options).await.map_err(|e| match e {
        SqliteError::Locked { path } => ComposeError::Adapter(format!(
            "another Posthorn server is using the SQLite database {} (it holds {}.lock); \
                 SQLite serves one server process: stop the other one, point this one at \
                 another file, or move to PostgreSQL with Redis to run several processes",
            path.display(),
            path.display()
        )),
        other => ComposeError::Adapter(format!("SQLite: {other}")),
    })
}

/// Why a read-only tool cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The tool needs `POSTHORN_STORE=sqlite:…`.
    #[error("`posthorn {tool}` reads a SQLite store, but POSTHORN_STORE is `{store}`")]
    NotSqlite {
        /// The subcommand.
        tool: &'static str,
        /// The store setting, redacted.
        store: String,
    },
    /// The store setting names no store.
    #[error(transparent)]
    UnknownStore(#[from] crate::store_spec::UnknownStore),
    /// The SQLite adapter failed.
    #[error("SQLite: {0}")]
    Sqlite(#[from] SqliteError),
    /// Anything else (the message is free of credentials).
    #[error("{0}")]
    Other(String),
}

/// The SQLite file `POSTHORN_STORE` names, for the tool `tool`.
pub fn sqlite_path(config: &Config, tool: &'static str) -> Result<PathBuf, ToolError> {
    match StoreSpec::parse(&config.store, &config.data_dir)? {
        StoreSpec::Sqlite(path) => Ok(path),
        _ => Err(ToolError::NotSqlite {
            tool,
            store: config.store.to_string(),
        }),
    }
}

/// `posthorn backup FILE`: a consistent copy of the SQLite store, taken read-only (without
/// the server's lock), so it works while the server runs.
pub async fn backup(config: &Config, dest: &Path) -> Result<(), ToolError> {
    let path = sqlite_path(config, "backup")?;
    let store = SqliteStore::open_read_only(&path).await?;
    let result = store.backup_to(dest).await;
    store.close().await;
    result?;
    println!(
        "backed up {} to {} (a consistent copy; serve it with POSTHORN_STORE=sqlite:{})",
        path.display(),
        dest.display(),
        dest.display()
    );
    Ok(())
}
