//! `RunWorkflowStep`: runs one step of one execution, or goes on with a step that waits
//! (a DELAY's end, a WAIT_FOR_EVENT's timeout) or calls a webhook (the next attempt).

use std::collections::HashSet;

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};

use super::event::resumed_by;
use super::settle::Decision;
use super::webhook::WebhookCall;
use crate::app::workflows::WorkflowGraph;
use crate::app::StepError;
use crate::jobs::JobOutcome;
use crate::model::{Contact, Event, ExecutionId, StepId, WorkspaceId};
use crate::ports::{ChangeSet, ClaimedJob, EventQuery, NewJob, Write};
use crate::workflow::{
    new_step_run, pure_outcome, DelayUnit, Execution, PureOutcome, Step, StepAction, StepRun,
    StepRunStatus, TransitionCondition, Wait, WaitOutcome, Workflow,
};
use crate::Engine;

/// Everything a step reads, loaded once per round.
pub(super) struct StepContext {
    /// The execution, at the version read.
    pub(super) execution: Execution,
    /// Its workflow.
    pub(super) workflow: Workflow,
    /// The step to run.
    pub(super) step: Step,
    /// The workflow's steps and edges.
    pub(super) graph: WorkflowGraph,
    /// The execution's contact, unless it was deleted.
    pub(super) contact: Option<Contact>,
    /// The step was deleted under the execution (`step` is a stand-in with its id).
    pub(super) step_deleted: bool,
    /// The steps the execution has records of (see `advance`).
    pub(super) ran: HashSet<StepId>,
}

impl Engine {
    /// Handles `RunWorkflowStep`.
    pub(crate) async fn run_workflow_step(
        &self,
        job: &ClaimedJob,
        workspace_id: &WorkspaceId,
        execution_id: &ExecutionId,
        step_id: &StepId,
    ) -> crate::Result<JobOutcome> {
        let call = self
            .on_conflict_retry(|| self.step_round(workspace_id, execution_id, step_id))
            .await?;
        if let Some(call) = call {
            self.webhook_attempt(call).await?;
        }
        self.jobs.complete(job).await?;
        Ok(JobOutcome::Done)
    }

    /// Loads what a round needs; `None` when the execution is gone or ended.
    pub(super) async fn step_context(
        &self,
        ws: &WorkspaceId,
        execution_id: &ExecutionId,
        step_id: &StepId,
    ) -> Result<Option<(StepContext, Option<StepRun>)>, StepError> {
        let Some(execution) = self.store.execution(ws, execution_id).await? else {
            return Ok(None);
        };
        if !execution.status.is_active() || execution.current_step_id.as_ref() != Some(step_id) {
            // Ended, cancelled, or already past this step: a stale job.
            return Ok(None);
        }
        let Some(workflow) = self.store.workflow(ws, &execution.workflow_id).await? else {
            return Ok(None);
        };
        let runs = self.store.step_runs(ws, execution_id).await?;
        let ran: HashSet<StepId> = runs.iter().map(|r| r.step_id.clone()).collect();
        let run = runs.into_iter().find(|r| &r.step_id == step_id);
        let graph = self.workflow_graph(&workflow).await?;
        let contact = self.store.contact(ws, &execution.contact_id).await?;
        let Some(step) = graph.steps.iter().find(|s| &s.id == step_id).cloned() else {
            // The step was deleted under a running execution: it cannot go on.
            let ctx = StepContext {
                step: ghost_step(&execution, step_id),
                execution,
                workflow,
                graph,
                contact,
                step_deleted: true,
                ran,
            };
            return Ok(Some((ctx, run)));
        };
        Ok(Some((
            StepContext {
                execution,
                workflow,
                step,
                graph,
                contact,
                step_deleted: false,
                ran,
            },
            run,
        )))
    }

    /// One read-decide-commit round of a step job; returns the webhook call to make, if the
    /// step is a webhook with an attempt due.
    async fn step_round(
        &self,
        ws: &WorkspaceId,
        execution_id: &ExecutionId,
        step_id: &StepId,
    ) -> Result<Option<WebhookCall>, StepError> {
        let Some((ctx, run)) = self.step_context(ws, execution_id, step_id).await? else {
            return Ok(None);
        };
        let now = self.clock.now();
        if ctx.step_deleted {
            let decision = Decision::Fail(DELETED_STEP.into());
            self.settle_decision(ctx, run, decision, ChangeSet::new(), now)
                .await?;
            return Ok(None);
        }
        match run {
            None => self.start_step(ctx, now).await,
            Some(run) => match run.status {
                StepRunStatus::Waiting => {
                    self.wake(ctx, run, now).await?;
                    Ok(None)
                }
                StepRunStatus::Running if matches!(ctx.step.action, StepAction::Webhook { .. }) => {
                    match ctx.contact.clone() {
                        Some(contact) => Ok(Some(WebhookCall::new(ctx, contact))),
                        None => {
                            let decision =
                                Decision::Fail("the execution's contact was deleted".into());
                            self.settle_decision(ctx, Some(run), decision, ChangeSet::new(), now)
                                .await?;
                            Ok(None)
                        }
                    }
                }
                // Completed, failed or cancelled: the step already ran.
                _ => Ok(None),
            },
        }
    }

    /// Runs a step that has no record yet.
    async fn start_step(
        &self,
        ctx: StepContext,
        now: DateTime<Utc>,
    ) -> Result<Option<WebhookCall>, StepError> {
        let needs_contact = !matches!(
            ctx.step.action,
            StepAction::Trigger { .. }
                | StepAction::Delay { .. }
                | StepAction::WaitForEvent { .. }
                | StepAction::Exit { .. }
        );
        if needs_contact && ctx.contact.is_none() {
            let decision = Decision::Fail("the execution's contact was deleted".into());
            self.settle_decision(ctx, None, decision, ChangeSet::new(), now)
                .await?;
            return Ok(None);
        }
        let mut changes = ChangeSet::new();
        let pure = pure_outcome(
            &ctx.step.action,
            ctx.contact.as_ref(),
            &ctx.execution.event,
            now,
        );
        if let Some(PureOutcome { output, taken }) = pure {
            let decision = complete(output, taken);
            self.settle_decision(ctx, None, decision, changes, now)
                .await?;
            return Ok(None);
        }
        let decision = match &ctx.step.action {
            // TRIGGER and EXIT are always pure, CONDITION is with its contact (checked above).
            StepAction::Trigger { .. } | StepAction::Exit { .. } | StepAction::Condition(_) => {
                return Err(contact_gone());
            }
            StepAction::Delay { amount, unit } => Decision::Wait(Wait {
                step_id: ctx.step.id.clone(),
                event_name: None,
                until: Some(now + delay(*amount, *unit)),
            }),
            StepAction::WaitForEvent {
                event_name,
                timeout,
            } => Decision::Wait(Wait {
                step_id: ctx.step.id.clone(),
                event_name: Some(event_name.clone()),
                until: timeout
                    .and_then(|s| i64::try_from(s).ok())
                    .map(|s| now + Duration::seconds(s)),
            }),
            StepAction::SendEmail { recipient } => {
                let recipient = recipient.clone();
                self.send_step(&ctx, &recipient, now, &mut changes).await?
            }
            StepAction::UpdateContact {
                updates,
                subscription_action,
            } => {
                self.update_contact_step(&ctx, updates, *subscription_action, now, &mut changes)
                    .await?
            }
            StepAction::Webhook { .. } => {
                // The record first (RUNNING), then the attempts: each attempt is recorded
                // on it, and a crash between them repeats the call with the same id.
                let run = new_step_run(&ctx.execution, &ctx.step, now);
                let mut execution = ctx.execution.clone();
                execution.updated_at = now;
                changes.push(Write::InsertStepRun(run));
                changes.push(Write::UpdateExecution(execution.clone()));
                self.store.commit(changes).await?;
                execution.version += 1;
                let ctx = StepContext { execution, ..ctx };
                return Ok(ctx
                    .contact
                    .clone()
                    .map(|contact| WebhookCall::new(ctx, contact)));
            }
        };
        self.settle_decision(ctx, None, decision, changes, now)
            .await?;
        Ok(None)
    }

    /// Goes on with a waiting step whose time came: a DELAY ends, a WAIT_FOR_EVENT times
    /// out. Early or foreign wake-ups change nothing.
    async fn wake(
        &self,
        mut ctx: StepContext,
        run: StepRun,
        now: DateTime<Utc>,
    ) -> Result<(), StepError> {
        let Some(wait) = ctx.execution.waiting.clone() else {
            return Ok(());
        };
        if wait.step_id != ctx.step.id {
            return Ok(());
        }
        if matches!(ctx.step.action, StepAction::WaitForEvent { .. }) {
            if let Some(event) = self.missed_event(&ctx.execution, &run, &wait).await? {
                let decision = resumed_by(&mut ctx, &event);
                return self
                    .settle_decision(ctx, Some(run), decision, ChangeSet::new(), now)
                    .await;
            }
        }
        let Some(until) = wait.until else {
            return Ok(());
        };
        if now < until {
            // The late-event look (see `Wait::first_wake`), or a run early by another
            // worker's clock: come back at the timeout.
            let mut changes = ChangeSet::new();
            changes.push(Write::EnqueueJob(NewJob::at(
                &*self.clock,
                crate::app::workflows::step_job(&ctx.execution, &ctx.step.id),
                until,
            )));
            self.store.commit(changes).await?;
            return Ok(());
        }
        let decision = match &ctx.step.action {
            StepAction::WaitForEvent { .. } => complete(
                json!({ "outcome": WaitOutcome::Timeout }),
                Some(TransitionCondition::Outcome {
                    outcome: WaitOutcome::Timeout,
                }),
            ),
            _ => complete(
                json!({ "waitedUntil": crate::model::timestamp::format(&until) }),
                None,
            ),
        };
        self.settle_decision(ctx, Some(run), decision, ChangeSet::new(), now)
            .await
    }

    /// The earliest stored event that should have ended `wait`: of its name and the
    /// execution's contact, made at or after the step started and not after its timeout.
    /// A dispatch normally ends the wait first; one is found here when the event was tracked
    /// while the wait was being committed (its request read that nobody waited, so it
    /// queued no dispatch), or when its dispatch is still queued at the timeout.
    async fn missed_event(
        &self,
        execution: &Execution,
        run: &StepRun,
        wait: &Wait,
    ) -> Result<Option<Event>, StepError> {
        let Some(name) = &wait.event_name else {
            return Ok(None);
        };
        let query = EventQuery {
            name: Some(name.clone()),
            contact_id: Some(execution.contact_id.clone()),
            limit: MISSED_EVENT_SCAN,
        };
        let events = self.store.events(&execution.workspace_id, &query).await?;
        Ok(events
            .into_iter()
            .filter(|e| {
                e.created_at >= run.started_at && wait.until.is_none_or(|u| e.created_at <= u)
            })
            .min_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id))))
    }
}

/// How many of a contact's newest events of the awaited name [`Engine::missed_event`]
/// looks at: more than a contact makes of one name within a wait's first minute or
/// between its timeout and the timeout's job.
const MISSED_EVENT_SCAN: usize = 1000;

/// Why a step failed when its step was deleted under the execution.
const DELETED_STEP: &str = "the step was deleted while the execution was at it";

/// A stand-in for a deleted step, so its execution can be failed with a record.
fn ghost_step(execution: &Execution, step_id: &StepId) -> Step {
    Step {
        id: step_id.clone(),
        workspace_id: execution.workspace_id.clone(),
        workflow_id: execution.workflow_id.clone(),
        name: String::new(),
        position: Value::Null,
        action: StepAction::Exit {
            reason: Some(DELETED_STEP.into()),
        },
        template_id: None,
        created_at: execution.started_at,
        updated_at: execution.started_at,
    }
}

fn contact_gone() -> StepError {
    StepError::Domain(crate::Error::Internal("contact vanished".into()))
}

/// A completed step's decision.
pub(super) fn complete(output: Value, taken: Option<TransitionCondition>) -> Decision {
    Decision::Complete {
        output,
        taken,
        email_id: None,
    }
}

/// A DELAY's length.
fn delay(amount: u32, unit: DelayUnit) -> Duration {
    let amount = i64::from(amount);
    match unit {
        DelayUnit::Minutes => Duration::minutes(amount),
        DelayUnit::Hours => Duration::hours(amount),
        DelayUnit::Days => Duration::days(amount),
    }
}
