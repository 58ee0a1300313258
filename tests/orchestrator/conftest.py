from __future__ import annotations

from typing import Any

import pytest

from core.access import OPERATOR
from core.agents.engines.fake import FakeEngine, FakeReply
from orchestrator.choices import PlanStatus
from orchestrator.coordinator.service import transcript_verify
from orchestrator.models import CoordinatorTurn, Plan, PlanStep
from orchestrator.services.executor import plan_execute
from orchestrator.services.plans import plan_transition
from tests.orchestrator import testcaps


@pytest.fixture(autouse=True)
def _reset_calls():
    testcaps.CALLS.clear()
    yield


def build_plan(owner, steps: list[dict[str, Any]], *, autonomy: str = "auto", status: str = "approved") -> Plan:
    """A plan straight from step dicts (bypassing the planner), already approved by default."""
    from core.capabilities import registry

    plan = Plan.objects.create(owner=owner, goal="test goal", autonomy=autonomy, status=status)
    PlanStep.objects.bulk_create(
        PlanStep(
            plan=plan,
            order=i + 1,
            capability=s["capability"],
            inputs=s.get("inputs", {}),
            tier=registry.get(s["capability"]).tier.label,
            depends_on=s.get("depends_on", []),
            quality_gate=s.get("quality_gate"),
        )
        for i, s in enumerate(steps)
    )
    return plan


def start(plan: Plan) -> Plan:
    """approved → running, then one executor pass in-process."""
    plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=plan.owner)
    return plan_execute(plan.pk)


@pytest.fixture
def owner(make_user):
    return make_user("oscar", OPERATOR)


COORDINATOR_TURNS = "/api/v1/aria/coordinator/turns"


def say(client, user, message) -> CoordinatorTurn:
    """One coordinator turn as `user`, through the API; the stored turn (the transcript must still verify)."""
    client.force_login(user)
    res = client.post(COORDINATOR_TURNS, {"message": message}, content_type="application/json")
    assert res.status_code == 201, res.content
    turn = CoordinatorTurn.objects.get(pk=res.json()["id"])
    assert turn.answer == res.json()["answer"] and transcript_verify() is None
    return turn


def done(turn: CoordinatorTurn) -> list[tuple[str, Any]]:
    """(action type, ok) of each action the turn executed."""
    return [(e["type"], e["result"].get("ok")) for e in turn.executed]


def scripted(*actions: dict, summary: str = "Done.", read: bool = True, references: dict | None = None) -> FakeEngine:
    """The offline model scripted to submit `actions` (after reading the plans, unless `read` is off)."""
    replies = [FakeReply(tool_calls=[("list_plans", {})])] if read else []
    plan = {"summary": summary, "actions": list(actions), "references": references or {}}
    return FakeEngine(script=[*replies, FakeReply(tool_calls=[("submit_action_plan", plan)])])


def tools(turn: CoordinatorTurn) -> list[str]:
    """The tools a turn called, in order."""
    return [c["tool"] for c in turn.tool_calls]
