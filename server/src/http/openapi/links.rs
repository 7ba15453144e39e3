//! OpenAPI `links`: from the answer that creates a resource to the operations on that
//! resource, so a client generator or a stateful fuzzer (schemathesis, `scripts/fuzz-api.sh`)
//! can chain create → read → change → delete with real ids.
//!
//! Each link names its target by `operationId` and fills the target's path parameters with
//! runtime expressions (`$response.body#/id`, `$request.path.id`). The unit tests check that
//! every source, target, parameter and body pointer exists in the document, so a renamed
//! route or field fails here rather than silently dropping the chain.
//!
//! The links are written as JSON into the response's extension map, not as utoipa `Link`s:
//! utoipa 5.5 serializes `Link::operation_id` as `operation_id`, which no OpenAPI reader
//! knows (the field is `operationId`).

use serde_json::{json, Map, Value};
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::{OpenApi, RefOr};

/// A link: from the `status` answer of `source` to `target`, with its path parameters.
struct LinkSpec {
    source: &'static str,
    status: &'static str,
    target: &'static str,
    parameters: Parameters,
}

/// `$response.body#/id` into the target's `{id}`.
const BODY_ID: &[(&str, &str)] = &[("id", "$response.body#/id")];
/// Campaign answers wrap the record in `data`.
const CAMPAIGN_ID: &[(&str, &str)] = &[("id", "$response.body#/data/id")];
/// The admin API answers a new workspace with its first key set beside it.
const WORKSPACE_ID: &[(&str, &str)] = &[("id", "$response.body#/workspace/id")];
const STEP: &[(&str, &str)] = &[
    ("id", "$response.body#/workflowId"),
    ("stepId", "$response.body#/id"),
];
const TRANSITION: &[(&str, &str)] = &[
    ("id", "$request.path.id"),
    ("transitionId", "$response.body#/id"),
];
const EXECUTION: &[(&str, &str)] = &[
    ("id", "$response.body#/workflowId"),
    ("executionId", "$response.body#/id"),
];

/// A target's path parameters and the runtime expression of each.
type Parameters = &'static [(&'static str, &'static str)];

/// `(source, status, parameters, targets)`: each source's links, one per target.
const CHAINS: &[(&str, &str, Parameters, &[&str])] = &[
    (
        "upsertContact",
        "201",
        BODY_ID,
        &["getContact", "updateContact", "deleteContact"],
    ),
    (
        "upsertContact",
        "200",
        BODY_ID,
        &["getContact", "updateContact", "deleteContact"],
    ),
    (
        "createTemplate",
        "201",
        BODY_ID,
        &[
            "getTemplate",
            "replaceTemplate",
            "updateTemplate",
            "deleteTemplate",
        ],
    ),
    (
        "createSegment",
        "201",
        BODY_ID,
        &[
            "getSegment",
            "replaceSegment",
            "updateSegment",
            "deleteSegment",
            "listSegmentContacts",
            "addSegmentMembers",
            "removeSegmentMembers",
        ],
    ),
    (
        "createCampaign",
        "201",
        CAMPAIGN_ID,
        &[
            "getCampaign",
            "updateCampaign",
            "patchCampaign",
            "deleteCampaign",
            "sendCampaign",
            "cancelCampaign",
            "getCampaignStats",
        ],
    ),
    (
        "createWorkflow",
        "201",
        BODY_ID,
        &[
            "getWorkflow",
            "updateWorkflow",
            "deleteWorkflow",
            "createWorkflowStep",
            "createWorkflowTransition",
            "listWorkflowExecutions",
            "startWorkflowExecution",
        ],
    ),
    (
        "createWorkflowStep",
        "201",
        STEP,
        &["updateWorkflowStep", "deleteWorkflowStep"],
    ),
    (
        "createWorkflowTransition",
        "201",
        TRANSITION,
        &["deleteWorkflowTransition"],
    ),
    (
        "startWorkflowExecution",
        "201",
        EXECUTION,
        &["getWorkflowExecution", "cancelWorkflowExecution"],
    ),
    (
        "createDomain",
        "201",
        BODY_ID,
        &["getDomain", "updateDomain", "deleteDomain", "verifyDomain"],
    ),
    ("createKeySet", "201", BODY_ID, &["revokeKeySet"]),
    (
        "adminCreateWorkspace",
        "201",
        WORKSPACE_ID,
        &[
            "adminGetWorkspace",
            "adminUpdateWorkspace",
            "adminAddDomain",
            "adminCreateKeySet",
        ],
    ),
];

fn specs() -> impl Iterator<Item = LinkSpec> {
    CHAINS
        .iter()
        .flat_map(|(source, status, parameters, targets)| {
            targets.iter().map(move |target| LinkSpec {
                source,
                status,
                target,
                parameters,
            })
        })
}

/// The operation with this `operationId`, if the document has it.
fn operation_mut<'a>(
    doc: &'a mut OpenApi,
    operation_id: &str,
) -> Option<&'a mut utoipa::openapi::path::Operation> {
    doc.paths.paths.values_mut().find_map(|item| {
        [
            &mut item.get,
            &mut item.post,
            &mut item.put,
            &mut item.patch,
            &mut item.delete,
        ]
        .into_iter()
        .filter_map(Option::as_mut)
        .find(|op| op.operation_id.as_deref() == Some(operation_id))
    })
}

/// Adds every link whose source answer exists. A link whose source or target is missing
/// (a route removed or renamed) is left out here and reported by the tests.
pub(super) fn add_links(doc: &mut OpenApi) {
    let operation_ids: Vec<String> = doc
        .paths
        .paths
        .values()
        .flat_map(|item| {
            [&item.get, &item.post, &item.put, &item.patch, &item.delete]
                .into_iter()
                .flatten()
                .filter_map(|op| op.operation_id.clone())
        })
        .collect();
    for spec in specs() {
        if !operation_ids.iter().any(|id| id == spec.target) {
            continue;
        }
        let Some(source) = operation_mut(doc, spec.source) else {
            continue;
        };
        let Some(RefOr::T(response)) = source.responses.responses.get_mut(spec.status) else {
            continue;
        };
        let parameters: Map<String, Value> = spec
            .parameters
            .iter()
            .map(|(name, expression)| (name.to_string(), Value::from(*expression)))
            .collect();
        let extensions = response.extensions.get_or_insert_with(Extensions::default);
        let links = extensions
            .entry("links".to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(links) = links {
            links.insert(
                spec.target.to_string(),
                json!({"operationId": spec.target, "parameters": parameters}),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document() -> Value {
        serde_json::to_value(super::super::document()).unwrap_or_default()
    }

    fn operations(doc: &Value) -> Vec<(String, Value)> {
        let mut found = Vec::new();
        for item in doc["paths"]
            .as_object()
            .into_iter()
            .flat_map(|p| p.values())
        {
            for method in ["get", "post", "put", "patch", "delete"] {
                if let Some(id) = item[method]["operationId"].as_str() {
                    found.push((id.to_string(), item[method].clone()));
                }
            }
        }
        found
    }

    fn operation(doc: &Value, id: &str) -> Value {
        operations(doc)
            .into_iter()
            .find(|(op, _)| op == id)
            .map(|(_, op)| op)
            .unwrap_or_else(|| panic!("no operation {id} in the document"))
    }

    /// Resolves `$ref`s to component schemas.
    fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
        match schema["$ref"].as_str() {
            Some(reference) => {
                let name = reference.trim_start_matches("#/components/schemas/");
                resolve(doc, &doc["components"]["schemas"][name])
            }
            None => schema,
        }
    }

    /// The schema of property `name` of `schema` (through `$ref`, `allOf`, `oneOf`).
    fn property<'a>(doc: &'a Value, schema: &'a Value, name: &str) -> Option<&'a Value> {
        let schema = resolve(doc, schema);
        if let Some(found) = schema["properties"].get(name) {
            return Some(found);
        }
        ["allOf", "oneOf", "anyOf"]
            .iter()
            .filter_map(|key| schema[*key].as_array())
            .flatten()
            .find_map(|part| property(doc, part, name))
    }

    #[test]
    fn every_link_joins_real_operations_parameters_and_fields() {
        let doc = document();
        for spec in specs() {
            let source = operation(&doc, spec.source);
            let target = operation(&doc, spec.target);
            let response = &source["responses"][spec.status];
            assert!(
                response["links"][spec.target]["operationId"] == spec.target,
                "{} {} has no link to {}",
                spec.source,
                spec.status,
                spec.target
            );
            let path_params: Vec<&str> = target["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "path")
                .filter_map(|p| p["name"].as_str())
                .collect();
            for name in &path_params {
                assert!(
                    spec.parameters.iter().any(|(given, _)| given == name),
                    "the link {} -> {} leaves `{name}` unset",
                    spec.source,
                    spec.target
                );
            }
            for (name, expression) in spec.parameters {
                assert!(
                    path_params.contains(name),
                    "{} has no path parameter `{name}`",
                    spec.target
                );
                if let Some(pointer) = expression.strip_prefix("$response.body#/") {
                    let mut schema = &response["content"]["application/json"]["schema"];
                    for segment in pointer.split('/') {
                        schema = property(&doc, schema, segment).unwrap_or_else(|| {
                            panic!(
                                "{} {} answers no `{pointer}` for {}",
                                spec.source, spec.status, spec.target
                            )
                        });
                    }
                } else if let Some(param) = expression.strip_prefix("$request.path.") {
                    assert!(
                        source["parameters"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .any(|p| p["in"] == "path" && p["name"] == param),
                        "{} has no path parameter `{param}`",
                        spec.source
                    );
                } else {
                    panic!("unsupported expression {expression}");
                }
            }
        }
    }

    #[test]
    fn every_operation_on_a_created_resource_is_reached_by_a_link() {
        let doc = document();
        let linked: Vec<&str> = specs().map(|s| s.target).collect();
        // Resources this API creates; their operations need the id a link hands over.
        let created = [
            "/contacts/{id}",
            "/templates/{id}",
            "/segments/{id}",
            "/campaigns/{id}",
            "/workflows/{id}",
            "/domains/{id}",
            "/keys/{id}",
        ];
        for (path, item) in doc["paths"].as_object().into_iter().flatten() {
            if !created.iter().any(|prefix| path.starts_with(prefix)) {
                continue;
            }
            for method in ["get", "post", "put", "patch", "delete"] {
                if let Some(id) = item[method]["operationId"].as_str() {
                    assert!(
                        linked.contains(&id),
                        "{} {path} ({id}) is reached by no link",
                        method.to_uppercase()
                    );
                }
            }
        }
    }
}
