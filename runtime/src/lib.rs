//! Run Posthorn's engine inside your own Rust service.
//!
//! [`EngineBuilder`] (reached as `Engine::builder()` with [`EngineExt`] in scope) takes the
//! adapters that must be chosen — the store, the job queue and the mail transport — and fills
//! in in-process defaults for the rest: the system clock, rate limits and idempotency cache in
//! memory, DNS through the system resolver. [`run_workers`] claims and runs the engine's
//! jobs (deliveries, campaign expansion, segment membership) until a shutdown signal.
//!
//! ```no_run
//! # async fn demo(transport: std::sync::Arc<dyn posthorn_core::ports::MailTransport>)
//! # -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use posthorn_runtime::{run_workers, Engine, EngineExt, WorkerOptions};
//!
//! let store = Arc::new(posthorn_memory::MemoryStore::new());
//! let engine = Engine::builder()
//!     .store(store.clone())
//!     .jobs(store)
//!     .transport(transport)
//!     .build()?;
//! let (stop, stopped) = tokio::sync::watch::channel(false);
//! let workers = tokio::spawn(run_workers(engine.clone(), WorkerOptions::default(), stopped));
//! // ... call engine.send(..), engine.track(..) ...
//! stop.send(true)?;
//! workers.await?;
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod builder;
mod give_way;
pub mod prelude;
mod worker;

pub use builder::{BuildError, EngineBuilder, EngineExt};
pub use give_way::{GiveWay, InFlight, RequestGauge};
pub use posthorn_core::{Engine, Settings};
pub use worker::{run_workers, WorkerOptions};
