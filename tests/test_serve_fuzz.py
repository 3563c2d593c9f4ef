"""`graphraft serve`'s HTTP API fuzzed from its own OpenAPI document (schemathesis): requests
the document allows, and requests it does not, on each store with the tiny model. No 5xx but
the deliberate 503 (a full queue, an unreachable database) and 504 (a deadline), and every
allowed request's response as the document declares it: status, content type and body."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from graphraft.serving.app import create_app

DELIBERATE = {503, 504}
CHECKS = [status_code_conformance, content_type_conformance, response_schema_conformance]


def fuzzer(operation, mode: GenerationMode, statuses: set[int]):
    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    def fuzz(case):
        response = case.call()
        statuses.add(response.status_code)
        assert response.status_code < 500 or response.status_code in DELIBERATE, (
            f"{case.method} {case.path} {case.body!r} -> {response.status_code}: {response.text[:300]}"
        )
        if mode is GenerationMode.POSITIVE:
            case.validate_response(response, checks=CHECKS)

    return fuzz


def test_the_api_keeps_its_document_and_answers_no_unexpected_server_error(engine):
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(engine, timeout_s=20))
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {(op.method.upper(), op.path) for op in operations} >= {("POST", "/ask"), ("GET", "/health")}
    statuses: set[int] = set()
    for operation in operations:
        # a request the document forbids exists only where there is something to send
        modes = list(GenerationMode) if operation.method.upper() == "POST" else [GenerationMode.POSITIVE]
        for mode in modes:
            fuzzer(operation, mode, statuses)()
    # the fuzzing reached answers, refusals and deadlines, not only one of them
    assert {200, 422} <= statuses and statuses & {400, 504}
