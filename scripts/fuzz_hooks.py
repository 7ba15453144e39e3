"""Schemathesis hooks of scripts/fuzz-api.sh (loaded through SCHEMATHESIS_HOOKS).

A client sends a new `Idempotency-Key` with each new request: the server refuses a key it
has seen with another body (422 IDEMPOTENCY_KEY_REUSED) by design, for 24 hours. The
generator draws keys from a small space and repeats them across different bodies, so every
well-formed key is replaced by a fresh one. Malformed keys (negative cases) are left as
generated, so the server is still checked to refuse them; so are negative cases (an edit
makes schemathesis revalidate the case, which would turn a request it means to send without
a header into one with it).
"""

import re
import uuid

import schemathesis

WELL_FORMED = re.compile(r"[!-~]([ -~]{0,253}[!-~])?")


@schemathesis.hook
def before_call(context, case, **kwargs):
    meta = case.meta
    if meta is not None and meta.generation.mode.is_negative:
        return
    headers = case.headers or {}
    for name in list(headers):
        if name.lower() != "idempotency-key":
            continue
        value = headers[name]
        if isinstance(value, str) and WELL_FORMED.fullmatch(value):
            headers[name] = f"fuzz-{uuid.uuid4()}"
