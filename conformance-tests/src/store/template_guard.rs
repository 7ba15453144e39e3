//! `Write::GuardTemplate`: an edit applies only to the template as it was read.

use posthorn_core::model::TemplateType;
use posthorn_core::ports::Write;

use crate::fixtures::{commit, commit_conflicts, fresh_id, now_ms, secs, template, workspace};
use crate::StorePorts;

/// The write after the guard goes through while the template is stored with the named
/// `updated_at`; a stale one, or a template deleted meanwhile, conflicts and applies nothing
/// (the edit does not bring a deleted template back).
pub async fn template_guard_on_updated_at(p: &StorePorts) {
    let ws = workspace(p, "template-guard").await;
    let now = now_ms();
    let s = p.store.as_ref();
    let t = template(&ws.id, "Guarded", "Hi", TemplateType::Transactional, now);
    commit(s, "insert", vec![Write::PutTemplate(t.clone())]).await;
    let guard = |id, updated_at| Write::GuardTemplate {
        workspace_id: ws.id.clone(),
        id,
        updated_at,
    };
    let mut first = t.clone();
    first.subject = "First".into();
    first.updated_at = secs(now, 1);
    commit(
        s,
        "an edit of the template as read",
        vec![guard(t.id.clone(), now), Write::PutTemplate(first.clone())],
    )
    .await;
    let mut second = t.clone();
    second.body = "<p>Second</p>".into();
    second.updated_at = secs(now, 2);
    commit_conflicts(
        s,
        "an edit of the template as read before the first",
        vec![guard(t.id.clone(), now), Write::PutTemplate(second.clone())],
    )
    .await;
    assert_eq!(s.template(&ws.id, &t.id).await, Ok(Some(first.clone())));

    commit(
        s,
        "delete",
        vec![Write::DeleteTemplate {
            workspace_id: ws.id.clone(),
            id: t.id.clone(),
        }],
    )
    .await;
    commit_conflicts(
        s,
        "an edit of a template deleted since it was read",
        vec![
            guard(t.id.clone(), first.updated_at),
            Write::PutTemplate(first.clone()),
        ],
    )
    .await;
    assert_eq!(
        s.template(&ws.id, &t.id).await,
        Ok(None),
        "not brought back"
    );
    commit_conflicts(s, "an unknown template", vec![guard(fresh_id(), now)]).await;
}
