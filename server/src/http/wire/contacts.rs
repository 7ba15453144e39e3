//! `/contacts`: bodies and query strings into typed commands, and answers.

use deserr::Deserr;
use posthorn_core::app::contacts::{
    decode_cursor, invalid_cursor, ContactList, ContactPatch, ListContacts, UpsertContact,
    MAX_CONTACT_PAGE,
};
use posthorn_core::model::Contact;
use posthorn_core::Error;
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};

use super::de::{Email, Filled, JsonObject, Nullable, QueryBool, QueryInt, WireErrors};

/// Body of `POST /contacts`.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors)]
pub struct ContactUpsert {
    /// Address; the contact with this address is updated, or created.
    #[schema(inline)]
    pub email: Filled<Email>,
    /// Flag; true for a new contact when omitted, unchanged for an existing one.
    #[deserr(default)]
    pub subscribed: Option<bool>,
    /// Merged shallowly into the contact's data; a `null` value removes that key.
    #[deserr(default)]
    #[schema(inline)]
    pub data: Option<JsonObject>,
}

impl From<ContactUpsert> for UpsertContact {
    fn from(body: ContactUpsert) -> Self {
        UpsertContact {
            email: body.email.0 .0,
            subscribed: body.subscribed,
            data: body.data.map(|d| d.0),
        }
    }
}

/// Body of `PATCH /contacts/{id}`.
#[derive(Debug, Deserr, ToSchema)]
#[deserr(error = WireErrors)]
#[schema(as = ContactPatch)]
pub struct ContactPatchBody {
    /// New subscription flag.
    #[deserr(default)]
    pub subscribed: Option<bool>,
    /// Merged shallowly (a `null` value removes that key); `data: null` clears all.
    #[deserr(default)]
    #[schema(required = false)]
    #[schema(inline)]
    pub data: Nullable<JsonObject>,
    /// New address (409 when another contact has it).
    #[deserr(default)]
    #[schema(inline)]
    pub email: Option<Email>,
}

impl From<ContactPatchBody> for ContactPatch {
    fn from(body: ContactPatchBody) -> Self {
        ContactPatch {
            subscribed: body.subscribed,
            data: body.data.into_patch().map(|d| d.0),
            email: body.email.map(|e| e.0),
        }
    }
}

/// The cursor of a contact page: empty for the first page, else a token this API issued.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ContactCursor(pub Option<String>);

impl Deserr<WireErrors> for ContactCursor {
    fn deserialize_from_value<V: deserr::IntoValue>(
        value: deserr::Value<V>,
        location: deserr::ValuePointerRef,
    ) -> Result<Self, WireErrors> {
        let raw = String::deserialize_from_value(value, location)?;
        let raw = raw.trim();
        if raw.is_empty() {
            return Ok(ContactCursor(None));
        }
        if decode_cursor(raw).is_none() {
            let errors = match invalid_cursor() {
                Error::Validation(errors) => errors,
                other => vec![posthorn_core::FieldError::new(
                    "cursor",
                    "invalid_cursor",
                    other.to_string(),
                )],
            };
            return Err(WireErrors(errors, Vec::new()));
        }
        Ok(ContactCursor(Some(raw.to_string())))
    }
}

/// Query of `GET /contacts` (cursor pagination, newest first).
#[derive(Debug, Deserr, IntoParams)]
#[deserr(error = WireErrors)]
#[into_params(parameter_in = Query)]
pub struct ContactsQuery {
    /// Page size (default 20).
    #[deserr(default = QueryInt(20))]
    #[param(inline, required = false)]
    pub limit: QueryInt<1, { MAX_CONTACT_PAGE as i64 }>,
    /// Only subscribed (`true`) or unsubscribed (`false`) contacts.
    #[deserr(default)]
    #[param(inline, required = false)]
    pub subscribed: QueryBool,
    /// The `cursor` of the previous page, exactly as answered: an opaque token that only
    /// this API issues; any other value is refused (422 `invalid_cursor`).
    #[deserr(default)]
    #[param(value_type = Option<String>)]
    pub cursor: ContactCursor,
    /// Case-insensitive substring of the email.
    #[deserr(default)]
    pub search: Option<String>,
    /// Alias of `search` (used when `search` is absent).
    #[deserr(default)]
    pub email: Option<String>,
}

impl From<ContactsQuery> for ListContacts {
    fn from(q: ContactsQuery) -> Self {
        ListContacts {
            limit: q.limit.0 as usize,
            subscribed: q.subscribed.0,
            search: q.search.or(q.email),
            cursor: q.cursor.0,
        }
    }
}

/// A contact with `_meta`, answered by `POST /contacts`.
#[derive(Debug, Serialize, ToSchema)]
pub struct UpsertedContact {
    /// The contact.
    #[serde(flatten)]
    pub contact: Contact,
    /// Whether the request created or updated the contact.
    #[serde(rename = "_meta")]
    pub meta: UpsertMeta,
}

/// Whether `POST /contacts` created or updated.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpsertMeta {
    /// The contact was created (status 201).
    pub is_new: bool,
    /// The contact existed (status 200).
    pub is_update: bool,
}

/// A cursor page of contacts, newest first.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContactPage {
    /// The contacts.
    pub data: Vec<Contact>,
    /// Cursor of the next page; null on the last page.
    #[schema(required = true)]
    pub cursor: Option<String>,
    /// Whether another page exists.
    pub has_more: bool,
    /// Number of matching contacts; only on the first page (no `cursor` given).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub total: Option<u64>,
}

impl From<ContactList> for ContactPage {
    fn from(page: ContactList) -> Self {
        ContactPage {
            data: page.contacts,
            cursor: page.cursor,
            has_more: page.has_more,
            total: page.total,
        }
    }
}
