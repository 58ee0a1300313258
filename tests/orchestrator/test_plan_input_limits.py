"""A plan's free text is bounded at the API: `done_when` like the goal (2,000 characters) and the
`constraints` object by its size as JSON. Over the limit is a 422 naming the field and nothing is
written (no plan, no audit row); at the limit the plan is drafted."""

import pytest

from core.models import AuditRecord
from orchestrator.models import Plan
from orchestrator.services.plans import CONSTRAINTS_MAX_CHARS

pytestmark = pytest.mark.django_db
API = "/api/v1/aria"
GOAL = "read the backlog template:none"


def create(client, user, **extra):
    client.force_login(user)
    return client.post(f"{API}/plans", {"goal": GOAL, **extra}, content_type="application/json")


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"done_when": "d" * 100_000}, "done_when"),
        ({"done_when": "d" * 2001}, "done_when"),
        ({"constraints": {"note": "c" * 100_000}}, "constraints"),
        ({"constraints": {"cells": ["P-02"], "why": ["x" * 100] * 100}}, "constraints"),
    ],
)
def test_oversized_done_when_or_constraints_is_a_422_naming_the_field_and_nothing_is_written(
    client, operator, extra, field
):
    audits = AuditRecord.objects.count()
    response = create(client, operator, **extra)
    assert response.status_code == 422, response.content
    body = response.json()
    assert body["field"] == field and body["detail"].startswith(f"{field}: "), body
    if field == "constraints":
        assert f"at most {CONSTRAINTS_MAX_CHARS:,} characters" in body["detail"]
    assert not Plan.objects.exists()
    assert AuditRecord.objects.count() == audits


def test_done_when_and_constraints_at_their_limits_are_accepted(client, operator):
    note = "c" * (CONSTRAINTS_MAX_CHARS - len('{"note": ""}'))
    response = create(client, operator, done_when="d" * 2000, constraints={"note": note})
    assert response.status_code == 201, response.content
    plan = Plan.objects.get()
    assert len(plan.done_when) == 2000 and plan.constraints == {"note": note}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"done_when": "d" * 100_000}, "done_when"),
        ({"constraints": {"note": "c" * 100_000}}, "constraints"),
        ({"context_refs": [f"cell:{n}" for n in range(51)]}, "context_refs"),
    ],
)
def test_a_model_calling_create_plan_meets_the_same_bounds(operator, params, field):
    """The chat's model drafts plans through the `orchestrator.create_plan` capability, not the API:
    the bounds live in plan_create, so a prompt-injected turn cannot store what the API refuses."""
    from core.capabilities import CapabilityContext, dispatch

    result = dispatch("orchestrator.create_plan", {"goal": GOAL, **params}, ctx=CapabilityContext(user=operator))
    assert result.is_error and result.message.startswith(f"{field}: "), result
    assert not Plan.objects.exists()
