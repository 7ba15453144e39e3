//! What an embedding application usually needs, in one `use posthorn_runtime::prelude::*;`.

pub use crate::{
    run_workers, BuildError, EngineBuilder, EngineExt, GiveWay, RequestGauge, WorkerOptions,
};
pub use posthorn_core::app::campaigns::{
    CampaignPatch, CreateCampaign, ListCampaigns, SendCampaign,
};
pub use posthorn_core::app::contacts::{ContactPatch, ListContacts, UpsertContact};
pub use posthorn_core::app::events::ListEvents;
pub use posthorn_core::app::keys::CreateKeySet;
pub use posthorn_core::app::segments::{CreateSegment, SegmentMembers, SegmentPatch};
pub use posthorn_core::app::send::{Recipient, SendEmail};
pub use posthorn_core::app::templates::{CreateTemplate, ListTemplates, TemplatePatch};
pub use posthorn_core::app::track::TrackEvent;
pub use posthorn_core::app::verify::Verify;
pub use posthorn_core::app::workflows::{
    CreateStep, CreateTransition, CreateWorkflow, StartExecution, StepPatch, WorkflowPatch,
};
pub use posthorn_core::app::workspaces::{AddDomain, CreateWorkspace, WorkspacePatch};
pub use posthorn_core::app::{Caller, PageRequest, Patch};
pub use posthorn_core::model::{EmailAddress, EventName, TemplateType};
pub use posthorn_core::ports::{MailTransport, OutgoingMessage, TransportError};
pub use posthorn_core::workflow::{DelayUnit, StepAction, Trigger};
pub use posthorn_core::{Engine, Error, Settings};
