//! The wire: request bodies and query strings turned into the core's typed commands and
//! queries, every failing field reported at once (paths and codes as in docs/api.md), and
//! the answers the handlers serialize. Handlers parse here, then call the engine with Rust
//! values only. Bodies are read with deserr ([`de`]) and the types derive their OpenAPI
//! schemas: the document describes exactly these types.

pub mod admin;
pub mod attachments;
pub mod campaigns;
pub mod contacts;
pub mod de;
pub mod domains;
pub mod events;
pub mod fast;
pub mod inbound;
pub mod mailbox;
pub mod segments;
pub mod send;
pub mod sns;
pub mod templates;
pub mod track;
pub mod workflow_config;
pub mod workflows;

/// The `/v1` envelope: `{success: true, data}`.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct V1<T> {
    /// Always `true`.
    pub success: bool,
    /// The answer.
    pub data: T,
}

impl<T> V1<T> {
    /// `{success: true, data}`.
    pub fn new(data: T) -> Self {
        Self {
            success: true,
            data,
        }
    }
}
