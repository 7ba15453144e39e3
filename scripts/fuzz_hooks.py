"""Schemathesis hooks of scripts/fuzz-api.sh (loaded through SCHEMATHESIS_HOOKS).

A client sends a new `Idempotency-Key` with each new request: the server refuses a key it
has seen with another body (422 IDEMPOTENCY_KEY_REUSED) by design, for 24 hours. The
generator draws keys from a small space and repeats them across different bodies, so every
well-formed key is replaced by a fresh one. Malformed keys (negative cases) are left as
generated, so the server is still checked to refuse them; so are negative cases (an edit
makes schemathesis revalidate the case, which would turn a request it means to send without
a header into one with it).

Workflow configurations get the same treatment. The document describes a step's `config`
and a workflow's `triggerConfig` as objects checked for the step's or trigger's kind
(docs/workflows.md lists each kind's fields); a generator that only sees "an object" almost
never builds a valid one. So each positive case of those operations gets a valid
configuration for the kind it drew, from `STEP_CONFIGS` and `TRIGGER_CONFIGS` (the WEBHOOK
URL is the loopback receiver of fuzz-api.sh, `FUZZ_WEBHOOK_URL`, and a SEND_EMAIL step
sends the template fuzz-api.sh created, `FUZZ_TEMPLATE_ID`); on PATCH of a step, whose
kind the request does not name, `config` and `templateId` are left out. Negative cases are
sent as generated, so the checks of those configurations are still exercised with bad input.

Senders too: a `from` address must be on a verified domain of the workspace (403
DOMAIN_NOT_VERIFIED), which generated addresses never are, so positive cases of the
operations in `SENDERS` send from `fuzz@example.com` (fuzz-api.sh verifies example.com).
"""

import os
import re
import uuid

import schemathesis
from hypothesis import strategies as st

WELL_FORMED = re.compile(r"[!-~]([ -~]{0,253}[!-~])?")


WEBHOOK_URL = os.environ.get("FUZZ_WEBHOOK_URL", "http://127.0.0.1:9/hook")
TEMPLATE_ID = os.environ.get("FUZZ_TEMPLATE_ID", "")

# A valid configuration of each step kind (docs/workflows.md).
STEP_CONFIGS = {
    "SEND_EMAIL": {"recipient": {"type": "CONTACT"}},
    "DELAY": {"amount": 2, "unit": "hours"},
    "WAIT_FOR_EVENT": {"eventName": "purchase", "timeout": 3600},
    "CONDITION": {"field": "data.plan", "operator": "equals", "value": "pro"},
    "UPDATE_CONTACT": {"updates": {"plan": "{{event.plan}}"}, "subscriptionAction": "none"},
    "WEBHOOK": {"url": WEBHOOK_URL, "method": "POST", "body": {"email": "{{contact.email}}"}},
    "EXIT": {"reason": "done"},
}
# A valid configuration of each trigger kind; absent `triggerType` means EVENT.
TRIGGER_CONFIGS = {
    "EVENT": {"eventName": "signup"},
    "MANUAL": {},
    "SCHEDULE": {"cron": "0 9 * * 1", "timezone": "Europe/Berlin", "segmentId": "fuzz"},
}


def _valid_workflow_configuration(label, body):
    """Gives a positive case's workflow body a configuration valid for its kind."""
    if not isinstance(body, dict):
        return
    if label == "POST /workflows":
        kind = body.get("triggerType") or "EVENT"
        body["triggerConfig"] = dict(TRIGGER_CONFIGS.get(kind, {}))
        body.pop("eventName", None)
    elif label == "PATCH /workflows/{id}":
        kind = body.get("triggerType")
        if kind is None:
            # Checked against the stored kind, which the request does not name.
            body.pop("triggerConfig", None)
        else:
            body["triggerConfig"] = dict(TRIGGER_CONFIGS.get(kind, {}))
    elif label == "POST /workflows/{id}/steps":
        kind = body.get("type")
        if kind in STEP_CONFIGS:
            body["config"] = dict(STEP_CONFIGS[kind])
        if kind == "SEND_EMAIL":
            # Required for it, and it must exist: the template fuzz-api.sh created.
            body["templateId"] = TEMPLATE_ID
        else:
            body.pop("templateId", None)
    elif label == "PATCH /workflows/{id}/steps/{stepId}":
        body.pop("config", None)
        body.pop("templateId", None)


# Operations whose `from` must be an address on a verified domain of the workspace (403
# DOMAIN_NOT_VERIFIED otherwise): fuzz-api.sh verifies example.com.
SENDERS = {
    "POST /v1/send",
    "POST /templates",
    "PUT /templates/{id}",
    "PATCH /templates/{id}",
    "POST /campaigns",
    "PUT /campaigns/{id}",
    "PATCH /campaigns/{id}",
}


# `POST /inbound/raw` takes a message as received (`message/rfc822`), which schemathesis
# cannot build from the document's string schema: a message with generated header values
# and body. Positive cases are addressed to an inbound-enabled domain of the workspace
# (fuzz-api.sh enables example.com), as a relaying MTA would only post those.
_LINE = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=0, max_size=60
)
_BODY = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
RFC822 = st.builds(
    lambda subject, body: (
        "From: Sender <someone@sender.test>\r\nTo: support@example.com\r\n"
        f"Subject: {subject}\r\nMessage-ID: <{uuid.uuid4()}@sender.test>\r\n\r\n{body}"
    ).encode("utf-8"),
    _LINE,
    _BODY,
)
schemathesis.openapi.media_type("message/rfc822", RFC822)


@schemathesis.hook
def before_call(context, case, **kwargs):
    meta = case.meta
    if meta is not None and meta.generation.mode.is_negative:
        return
    label = case.operation.label
    _valid_workflow_configuration(label, case.body)
    if label == "POST /inbound/raw":
        case.query = {"to": ["support@example.com"], "from": "someone@sender.test"}
    if label in SENDERS and isinstance(case.body, dict) and isinstance(case.body.get("from"), str):
        case.body["from"] = "fuzz@example.com"
    headers = case.headers or {}
    for name in list(headers):
        if name.lower() != "idempotency-key":
            continue
        value = headers[name]
        if isinstance(value, str) and WELL_FORMED.fullmatch(value):
            headers[name] = f"fuzz-{uuid.uuid4()}"


# The refusals of schema-valid requests that docs/api.md ("Refusals that depend on a
# resource's state") documents as correct: each depends on the state of what the request
# names, the clock or an issued token, which a schema cannot state. Keys are operations as
# schemathesis labels them; values list (status, error code, field, field code) with `None`
# for "any", and optionally a part of the message. Everything else a positive case is
# refused with stays a finding.
_STATE = (400, "INVALID_STATE", None, None)
_FILTERED = (400, "BAD_REQUEST", None, None, "audienceType FILTERED needs an audienceCondition")
_SEGMENT = (400, "BAD_REQUEST", None, None, "audienceType SEGMENT needs a segmentId")
_CONDITION = [
    (422, "VALIDATION_ERROR", field, code)
    for field in ("condition", "audienceCondition")
    for code in ("unknown_segment", "segment_not_tracked", "segment_cycle")
]
_CURSOR = [(422, "VALIDATION_ERROR", "cursor", "invalid_cursor")]
# Subjects and bodies are templates: a string the template language cannot parse (`{%` with
# no tag after it) is refused, which a JSON Schema pattern cannot express.
_TEMPLATE = [(422, "VALIDATION_ERROR", ("subject", "body", "text"), "invalid_template")]
DOCUMENTED_REFUSALS = {
    "PUT /campaigns/{id}": [_STATE, _FILTERED, _SEGMENT, *_CONDITION, *_TEMPLATE],
    "PATCH /campaigns/{id}": [_STATE, _FILTERED, _SEGMENT, *_CONDITION, *_TEMPLATE],
    "POST /templates": _TEMPLATE,
    "PUT /templates/{id}": _TEMPLATE,
    "PATCH /templates/{id}": _TEMPLATE,
    "DELETE /campaigns/{id}": [_STATE],
    "POST /campaigns": [*_CONDITION, *_TEMPLATE],
    "POST /campaigns/{id}/send": [
        _STATE,
        (422, "VALIDATION_ERROR", "scheduledFor", "in_the_past"),
        (400, "BAD_REQUEST", None, None, "the campaign has no recipients"),
    ],
    "POST /campaigns/{id}/cancel": [_STATE],
    "POST /segments": _CONDITION,
    "PUT /segments/{id}": [(422, "VALIDATION_ERROR", "type", "immutable"), *_CONDITION],
    "PATCH /segments/{id}": [(422, "VALIDATION_ERROR", "type", "immutable"), *_CONDITION],
    "POST /segments/{id}/members": [_STATE],
    "DELETE /segments/{id}/members": [_STATE],
    "DELETE /workflows/{id}/executions/{executionId}": [_STATE],
    "POST /workflows": [(422, "VALIDATION_ERROR", "triggerConfig.segmentId", "not_found")],
    "PATCH /workflows/{id}": [(422, "VALIDATION_ERROR", "triggerConfig.segmentId", "not_found")],
    "POST /workflows/{id}/transitions": [_STATE],
    "PATCH /workflows/{id}/steps/{stepId}": [
        _STATE,
        (422, "VALIDATION_ERROR", "config", "type_mismatch"),
    ],
    "DELETE /workflows/{id}/steps/{stepId}": [_STATE],
    "POST /workflows/{id}/executions": [_STATE],
    "GET /contacts": _CURSOR,
    "GET /templates": _CURSOR,
    "POST /v1/send": [
        (422, "VALIDATION_ERROR", "from", "required"),
        (400, "BAD_REQUEST", None, None, "The template is MARKETING and these recipients are unsubscribed"),
        *_TEMPLATE,
    ],
}
_ANY_POST = [(422, "IDEMPOTENCY_KEY_REUSED", None, None)]


def _documented(label, status, body):
    """Whether `body` (the error envelope) is a refusal `DOCUMENTED_REFUSALS` accepts."""
    rules = DOCUMENTED_REFUSALS.get(label, [])
    if label.startswith("POST "):
        rules = rules + _ANY_POST
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return False
    code = error.get("code")
    message = error.get("message") or ""
    fields = error.get("errors") or []
    for rule_status, rule_code, field, field_code, *words in rules:
        if rule_status != status or rule_code != code:
            continue
        if words and words[0] not in message:
            continue
        if field is None:
            return True
        # Every failing field must be one the rule accepts (`field`: one name or a tuple).
        names = field if isinstance(field, tuple) else (field,)
        if fields and all(
            isinstance(f, dict) and f.get("field") in names and f.get("code") == field_code
            for f in fields
        ):
            return True
    return False


@schemathesis.check
def positive_data_acceptance_documented(ctx, response, case):
    """`positive_data_acceptance`, less the refusals docs/api.md documents as correct.

    The run excludes the built-in check and runs this one in its place: a schema-valid request
    refused with a status the check does not expect is a finding unless its operation, status,
    error code and failing fields are one of `DOCUMENTED_REFUSALS`.
    """
    from schemathesis.specs.openapi.checks import (
        RejectedPositiveData,
        _openapi_positive_data_acceptance,
    )

    try:
        return _openapi_positive_data_acceptance(ctx, response, case)
    except RejectedPositiveData:
        try:
            body = response.json()
        except Exception:  # noqa: BLE001 - any unreadable body stays a finding
            body = None
        if _documented(case.operation.label, response.status_code, body):
            return None
        raise


# The error code of a 404 for the resource each path names.
_NOT_FOUND_OF_PATH = {
    "contacts": "CONTACT_NOT_FOUND",
    "templates": "TEMPLATE_NOT_FOUND",
    "campaigns": "CAMPAIGN_NOT_FOUND",
    "segments": "SEGMENT_NOT_FOUND",
    "workflows": "WORKFLOW_NOT_FOUND",
}


@schemathesis.check
def ensure_resource_availability_named(ctx, response, case):
    """`ensure_resource_availability`, reading which resource a 404 is about.

    The run excludes the built-in check and runs this one in its place. The built-in takes
    any 404 after a create as "the created resource is gone"; this API names the missing
    resource in the error code, so a 404 about another resource the body names (PATCH of a
    new campaign with an unknown `segmentId`: SEGMENT_NOT_FOUND) is not that finding.
    Every other 404 still is.
    """
    from schemathesis.specs.openapi.checks import (
        EnsureResourceAvailability,
        ensure_resource_availability,
    )

    try:
        return ensure_resource_availability(ctx, response, case)
    except EnsureResourceAvailability:
        try:
            code = response.json()["error"]["code"]
        except Exception:  # noqa: BLE001 - any unreadable body stays a finding
            raise
        first = case.path.strip("/").split("/")[0]
        own = _NOT_FOUND_OF_PATH.get(first)
        if own and code.endswith("_NOT_FOUND") and code != own:
            return None
        raise
