"""Property-based API fuzzing: schemathesis walks every /api/v1 operation of the served OpenAPI schema
as an operator with a bearer token, on the seeded demo data, and checks that nothing answers 5xx and
that every answer matches what the schema documents (status codes, content types, bodies).

Bounded for CI: a few derandomized examples per operation, no example database, no shrinking
(about a minute). It runs when ARIA_FUZZ=1 — its own step in CI's PostgreSQL + Redis leg (.ci/run) —
and is skipped in the everyday suite. `ARIA_FUZZ_EXAMPLES` raises the count for a deeper local run:

    ARIA_FUZZ=1 .venv/bin/python -m pytest -q tests/security/test_schemathesis.py
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from aria_project.api import api
from core.seed import seed_all_apps
from core.tokens import api_token_create

MAX_EXAMPLES = int(os.environ.get("ARIA_FUZZ_EXAMPLES", "6"))
pytestmark = pytest.mark.skipif(os.environ.get("ARIA_FUZZ") != "1", reason="API fuzzing runs with ARIA_FUZZ=1")

schema = schemathesis.openapi.from_dict(api.get_openapi_schema())
schema.app = WSGIHandler()  # requests go through the whole Django stack, middleware included
# NUL characters are refused for every text (core.request_limits, core.json_body; tested in test_bad_input),
# a rule the schema states in its 422 description rather than on every string.
# The test sends its own bearer token on every call (below), so a generated Authorization header is
# always replaced: a negative case whose mutation was that header went out valid and was "accepted"
# (ST201 on GET /workorders/evaluation/rca-runs at 60 examples). Security parameters are not generated.
schema.config.generation.update(
    max_examples=MAX_EXAMPLES,
    with_security_parameters=False,
    deterministic=True,
    no_shrink=True,
    database="none",
    allow_x00=False,
)
# A body over the API's size limit is refused with 413 (core.request_limits): a rejection like 400/422.
_rejection = schema.config.checks.negative_data_rejection
_rejection.expected_statuses = [*_rejection.expected_statuses, "413"]


# Rules JSON Schema cannot state, so a schema-valid request may still be refused with 422: the chat's
# last message must be the user's (an array's last item); ingested samples must name existing signals.
SCHEMA_CANNOT_SAY = {
    ("POST", "/api/v1/agent/chat"): [positive_data_acceptance],
    ("POST", "/api/v1/signals/samples"): [positive_data_acceptance],
    # the alarm-performance window: start before end, not in the future, at most 31 days, start or hours
    ("GET", "/api/v1/alarm-performance"): [positive_data_acceptance],
    # a handover's date and shift come together or not at all, within the last 7 days
    ("POST", "/api/v1/workorders/shift/handovers"): [positive_data_acceptance],
    # a logbook entry's time within 30 days back and 5 minutes ahead (relative to now)
    ("POST", "/api/v1/workorders/shift/logbook"): [positive_data_acceptance],
    # a work order raised by hand names a cell that exists (workorders.services.manual_intake)
    ("POST", "/api/v1/workorders"): [positive_data_acceptance],
    # a KB patch's sections have shapes (workorders/shapes.py) the schema leaves open (a JSON object)
    ("PATCH", "/api/v1/workorders/kb/{cell_id}"): [positive_data_acceptance],
    # a draft's name rule depends on its type (a tool's is stricter than a skill's); an author's
    # unpublished drafts are bounded (max_open_drafts_per_author)
    ("POST", "/api/v1/assistant/drafts"): [positive_data_acceptance],
    ("PATCH", "/api/v1/assistant/drafts/{draft_id}"): [positive_data_acceptance],
}


@pytest.fixture
def operator_token(operator) -> str:
    seed_all_apps(io.StringIO())
    _, raw = api_token_create(user=operator, name="fuzz")
    return raw


@pytest.fixture(autouse=True)
def _keep_the_test_transaction() -> Iterator[None]:
    """The WSGI handler runs in this thread on the test's connection; Django would close it at
    the end of every request (as its own test client avoids), ending the test's transaction."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.mark.django_db
@schema.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck), print_blob=False)
def test_api_operation_never_errors_and_matches_its_schema(case, operator_token: str) -> None:
    excluded = SCHEMA_CANNOT_SAY.get((case.method, case.path), [])
    case.call_and_validate(headers={"Authorization": f"Bearer {operator_token}"}, excluded_checks=excluded)
