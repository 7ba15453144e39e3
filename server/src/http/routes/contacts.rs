//! `/contacts`.

use crate::http::answer::JsonAnswer;
use crate::http::path::WirePath;
use axum::extract::{Extension, State};
use axum::http::StatusCode;
use posthorn_core::app::Caller;
use posthorn_core::model::Contact;
use posthorn_core::model::ContactId;
use std::sync::Arc;

use crate::http::body::Wire;
use crate::http::error::{ApiResult, ErrorResponse};
use crate::http::query::WireQuery;
use crate::http::wire::contacts::{
    ContactPage, ContactPatchBody, ContactUpsert, ContactsQuery, UpsertMeta, UpsertedContact,
};
use crate::http::AppState;

/// Create or update a contact
///
/// Upserts by email: 201 when created, 200 when updated; `_meta` says which.
#[utoipa::path(
    post, path = "/contacts", operation_id = "upsertContact", tag = "Contacts",
    request_body = ContactUpsert,
    responses(
        (status = 200, description = "Updated", body = UpsertedContact),
        (status = 201, description = "Created", body = UpsertedContact),
        (status = 422, description = "Invalid fields (`VALIDATION_ERROR`) or `Idempotency-Key` reused with another body (`IDEMPOTENCY_KEY_REUSED`)", body = ErrorResponse),
    ),
)]
pub async fn upsert(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    Wire(body): Wire<ContactUpsert>,
) -> ApiResult<(StatusCode, JsonAnswer<UpsertedContact>)> {
    let done = state.engine.upsert_contact(&caller, body.into()).await?;
    let status = if done.is_new {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let meta = UpsertMeta {
        is_new: done.is_new,
        is_update: !done.is_new,
    };
    Ok((
        status,
        JsonAnswer(UpsertedContact {
            contact: done.contact,
            meta,
        }),
    ))
}

/// List contacts
///
/// Cursor pagination, newest first; `total` only on the first page.
#[utoipa::path(
    get, path = "/contacts", operation_id = "listContacts", tag = "Contacts",
    params(ContactsQuery),
    responses(
        (status = 200, description = "A page of contacts", body = ContactPage),
        (status = 422, description = "`limit` out of range, `subscribed` not a boolean or an unknown `cursor` (`VALIDATION_ERROR`)", body = ErrorResponse),
    ),
)]
pub async fn list(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WireQuery(query): WireQuery<ContactsQuery>,
) -> ApiResult<JsonAnswer<ContactPage>> {
    let page = state.engine.list_contacts(&caller, query.into()).await?;
    Ok(JsonAnswer(page.into()))
}

/// Read a contact
#[utoipa::path(
    get, path = "/contacts/{id}", operation_id = "getContact", tag = "Contacts",
    params(("id" = String, Path, description = "Contact id")),
    responses(
        (status = 200, description = "The contact", body = Contact),
        (status = 404, description = "No such contact in this workspace (`CONTACT_NOT_FOUND`)", body = ErrorResponse),
    ),
)]
pub async fn read(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<ContactId>,
) -> ApiResult<JsonAnswer<Contact>> {
    Ok(JsonAnswer(state.engine.contact(&caller, &id).await?))
}

/// Update a contact
///
/// Emits `contact.subscribed` or `contact.unsubscribed` when the flag changes.
#[utoipa::path(
    patch, path = "/contacts/{id}", operation_id = "updateContact", tag = "Contacts",
    params(("id" = String, Path, description = "Contact id")),
    request_body = ContactPatchBody,
    responses(
        (status = 200, description = "The updated contact", body = Contact),
        (status = 404, description = "No such contact in this workspace (`CONTACT_NOT_FOUND`)", body = ErrorResponse),
        (status = 409, description = "Another contact has the new `email` (`CONFLICT`)", body = ErrorResponse),
        (status = 422, description = "Invalid fields (`VALIDATION_ERROR`)", body = ErrorResponse),
    ),
)]
pub async fn patch(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<ContactId>,
    Wire(body): Wire<ContactPatchBody>,
) -> ApiResult<JsonAnswer<Contact>> {
    Ok(JsonAnswer(
        state
            .engine
            .patch_contact(&caller, &id, body.into())
            .await?,
    ))
}

/// Delete a contact
///
/// Also removes its memberships; a PENDING contact may take the freed place.
#[utoipa::path(
    delete, path = "/contacts/{id}", operation_id = "deleteContact", tag = "Contacts",
    params(("id" = String, Path, description = "Contact id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such contact in this workspace (`CONTACT_NOT_FOUND`)", body = ErrorResponse),
    ),
)]
pub async fn delete(
    State(state): State<AppState>,
    Extension(caller): Extension<Arc<Caller>>,
    WirePath(id): WirePath<ContactId>,
) -> ApiResult<StatusCode> {
    state.engine.delete_contact(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}
