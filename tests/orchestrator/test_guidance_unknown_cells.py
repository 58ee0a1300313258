"""Guidance that names a cell or line the plant does not have is refused, on every path.

The walkthrough's defect: POST /api/v1/aria/plans with the Plans page's "Only on" set to a tag no
cell has (`NONEXISTENT-CELL`) drafted a plan anyway — its steps left out by the guidance, with no
planner note naming the tag — while the coordinator's attach_guidance refused the same limits. Now
both refuse: the API with a 422 naming the field (and the plant's tags when there are few), nothing
written; the coordinator with the same reason.
"""

from __future__ import annotations

import pytest

from core.capabilities import CapabilityContext, dispatch
from core.models import AuditRecord
from orchestrator.models import Plan
from tests.orchestrator.conftest import build_plan, say
from tests.workorders import factories as f

pytestmark = pytest.mark.django_db
API = "/api/v1/aria"
GOALS = [
    "Investigate all open alarms and prepare work orders",
    "Check the alarms on P-01",
    "read the backlog template:none",
]


@pytest.fixture
def plant(operator):
    f.make_cell("P-01")
    f.make_cell("C-01")


def _create(client, user, goal: str, constraints: dict):
    client.force_login(user)
    return client.post(f"{API}/plans", {"goal": goal, "constraints": constraints}, content_type="application/json")


@pytest.mark.parametrize("goal", GOALS)
def test_only_on_a_cell_that_does_not_exist_is_a_422_naming_the_field(client, operator, plant, goal):
    response = _create(client, operator, goal, {"cells": ["NONEXISTENT-CELL"]})
    assert response.status_code == 422, response.content
    body = response.json()
    assert body["field"] == "constraints.cells"
    assert body["detail"] == "constraints.cells: no cell is tagged NONEXISTENT-CELL (cells: C-01, P-01)."
    assert not Plan.objects.exists() and not AuditRecord.objects.filter(action="plan.create").exists()


def test_one_unknown_tag_among_known_ones_is_refused(client, operator, plant):
    response = _create(client, operator, GOALS[0], {"cells": ["P-01", "X-99"]})
    assert response.status_code == 422
    assert response.json()["detail"] == "constraints.cells: no cell is tagged X-99 (cells: C-01, P-01)."
    assert not Plan.objects.exists()


def test_only_on_a_line_that_does_not_exist_is_a_422_naming_the_field(client, operator, plant):
    response = _create(client, operator, GOALS[0], {"lines": ["line 9"]})
    assert response.status_code == 422
    body = response.json()
    assert body["field"] == "constraints.lines"
    assert body["detail"] == "constraints.lines: no production line matches 'line 9' (lines: Line 1)."
    assert not Plan.objects.exists()


def test_known_cells_and_lines_in_any_case_are_planned(client, operator, plant):
    response = _create(client, operator, "Check the alarms on P-01", {"cells": ["p-01"], "lines": ["line 1"]})
    assert response.status_code == 201, response.content
    assert response.json()["steps"]


def test_the_chat_capability_refuses_it_too(operator, plant):
    result = dispatch(
        "orchestrator.create_plan",
        {"goal": GOALS[0], "constraints": {"cells": ["NONEXISTENT-CELL"]}},
        ctx=CapabilityContext(user=operator),
    )
    assert result.is_error and "no cell is tagged NONEXISTENT-CELL (cells: C-01, P-01)" in result.message
    assert not Plan.objects.exists()


def test_the_coordinator_refuses_the_same_guidance_with_the_same_reason(client, operator, plant):
    plan = build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], status="draft")
    turn = say(client, operator, "carry on, but only X-99")
    refused = [c for c in turn.validation if c["check"] == "state" and not c["ok"]]
    assert [c["reason"] for c in refused] == ["no cell is tagged X-99 (cells: C-01, P-01)"]
    plan.refresh_from_db()
    assert "cells" not in plan.constraints and not turn.executed
    api = _create(client, operator, plan.goal, {"cells": ["X-99"]})
    assert api.json()["detail"] == f"constraints.cells: {refused[0]['reason']}."
