//! What `POSTHORN_STORE` names: the memory store, a SQLite file or a PostgreSQL URL.

use std::path::{Path, PathBuf};

use crate::config::SqliteSynchronous;
use crate::secret::SecretUrl;

/// The database file of `sqlite:` (no path) inside `POSTHORN_DATA_DIR`.
pub const DEFAULT_SQLITE_FILE: &str = "posthorn.db";

/// The store a `POSTHORN_STORE` value names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// `memory`: in process, lost on exit.
    Memory,
    /// `sqlite:`, `sqlite:PATH` or `sqlite://PATH`: one file, one server process.
    Sqlite(PathBuf),
    /// `postgres://…` or `postgresql://…` (the URL stays in the [`SecretUrl`]).
    Postgres,
}

/// Why a `POSTHORN_STORE` value names no store (its Display is the redacted value).
#[derive(Debug, thiserror::Error)]
#[error("POSTHORN_STORE must be `sqlite:` (POSTHORN_DATA_DIR/{DEFAULT_SQLITE_FILE}), `sqlite:PATH`, `memory` or a postgres:// URL, got `{0}`")]
pub struct UnknownStore(pub String);

impl StoreSpec {
    /// Parses `store`; `sqlite:` without a path means `data_dir/posthorn.db`.
    pub fn parse(store: &SecretUrl, data_dir: &Path) -> Result<StoreSpec, UnknownStore> {
        let value = store.expose().trim();
        if value == "memory" {
            return Ok(StoreSpec::Memory);
        }
        if value.starts_with("postgres://") || value.starts_with("postgresql://") {
            return Ok(StoreSpec::Postgres);
        }
        if let Some(rest) = value.strip_prefix("sqlite:") {
            // `sqlite://PATH` as well as `sqlite:PATH`: `sqlite:///abs` is `/abs`.
            let path = rest.strip_prefix("//").unwrap_or(rest);
            if path.is_empty() {
                return Ok(StoreSpec::Sqlite(data_dir.join(DEFAULT_SQLITE_FILE)));
            }
            return Ok(StoreSpec::Sqlite(PathBuf::from(path)));
        }
        Err(UnknownStore(store.to_string()))
    }
}

impl From<SqliteSynchronous> for posthorn_sqlite::Durability {
    fn from(value: SqliteSynchronous) -> Self {
        match value {
            SqliteSynchronous::Full => posthorn_sqlite::Durability::Full,
            SqliteSynchronous::Normal => posthorn_sqlite::Durability::Normal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(value: &str) -> Result<StoreSpec, UnknownStore> {
        let url: SecretUrl = value.parse().expect("infallible");
        StoreSpec::parse(&url, Path::new("./data"))
    }

    #[test]
    fn sqlite_without_a_path_is_the_data_dir_file() {
        assert_eq!(
            parse("sqlite:").expect("sqlite"),
            StoreSpec::Sqlite(PathBuf::from("./data/posthorn.db"))
        );
        assert_eq!(
            parse("sqlite://").expect("sqlite"),
            StoreSpec::Sqlite(PathBuf::from("./data/posthorn.db"))
        );
    }

    #[test]
    fn sqlite_paths_are_taken_as_written() {
        assert_eq!(
            parse("sqlite:/var/lib/posthorn/p.db").expect("sqlite"),
            StoreSpec::Sqlite(PathBuf::from("/var/lib/posthorn/p.db"))
        );
        assert_eq!(
            parse("sqlite:rel/p.db").expect("sqlite"),
            StoreSpec::Sqlite(PathBuf::from("rel/p.db"))
        );
        assert_eq!(
            parse("sqlite:///var/p.db").expect("sqlite"),
            StoreSpec::Sqlite(PathBuf::from("/var/p.db"))
        );
        assert_eq!(
            parse("sqlite://rel/p.db").expect("sqlite"),
            StoreSpec::Sqlite(PathBuf::from("rel/p.db"))
        );
    }

    #[test]
    fn memory_and_postgres_are_recognised() {
        assert_eq!(parse("memory").expect("memory"), StoreSpec::Memory);
        assert_eq!(
            parse("postgres://u:p@h/db").expect("pg"),
            StoreSpec::Postgres
        );
        assert_eq!(parse("postgresql://h/db").expect("pg"), StoreSpec::Postgres);
    }

    #[test]
    fn the_flags_choose_the_file_and_its_durability() {
        use clap::Parser;

        let config = crate::Config::try_parse_from([
            "posthorn",
            "--store",
            "sqlite:",
            "--data-dir",
            "/srv/posthorn",
            "--sqlite-synchronous",
            "normal",
        ])
        .expect("valid flags");
        assert_eq!(
            StoreSpec::parse(&config.store, &config.data_dir).expect("sqlite"),
            StoreSpec::Sqlite(PathBuf::from("/srv/posthorn/posthorn.db"))
        );
        assert_eq!(
            posthorn_sqlite::Durability::from(config.sqlite_synchronous),
            posthorn_sqlite::Durability::Normal
        );
        let refused = crate::Config::try_parse_from(["posthorn", "--sqlite-synchronous", "off"]);
        assert!(refused.is_err(), "only full and normal are accepted");
    }

    #[test]
    fn unknown_stores_are_refused_without_their_password() {
        let err = parse("mysql://root:hunter2@h/db").expect_err("unknown");
        let message = err.to_string();
        assert!(!message.contains("hunter2"), "{message}");
        assert!(message.contains("sqlite:"), "{message}");
    }
}
