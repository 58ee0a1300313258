"""Coordinator approvals: which checkpoints the coordinator may decide (`coordinator_approvable`),
and the rules of `decide_approval` and `request_approval` — a gated approval stays human, a
checkpoint that is the user's own is answered by the user, and a request is made once."""

import pytest

from orchestrator.coordinator.service import coordinator_turn
from orchestrator.models import Interaction
from tests.orchestrator import testcaps
from tests.orchestrator.conftest import build_plan, scripted, start

pytestmark = pytest.mark.django_db


def test_executor_marks_coordinator_approvable_checkpoints(operator):
    cases = {
        "otest.read_value": ({"key": "k"}, "ask_all", True),
        "otest.note": ({"label": "n"}, "ask_all", True),
        "otest.write_effect": ({"label": "w"}, "ask_mutations", False),
        "otest.release": ({"label": "r"}, "auto", False),
    }
    for capability, (inputs, autonomy, expected) in cases.items():
        plan = start(build_plan(operator, [{"capability": capability, "inputs": inputs}], autonomy=autonomy))
        assert Interaction.objects.get(plan=plan).coordinator_approvable is expected, capability
    gate = {"field": "value", "op": "gte", "threshold": 5}
    plan = start(
        build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}, "quality_gate": gate}])
    )
    confirm = Interaction.objects.get(plan=plan)
    assert confirm.kind == "confirm" and confirm.coordinator_approvable


def test_decide_approval_only_on_approvable_checkpoints(operator):
    plan = start(
        build_plan(operator, [{"capability": "otest.write_effect", "inputs": {"label": "w"}}], autonomy="ask_mutations")
    )
    ask = Interaction.objects.get(plan=plan)
    turn = coordinator_turn(
        user=operator, message="x",
        engine=scripted({"type": "decide_approval", "interaction_id": ask.pk, "decision": "approve"}),
    )  # fmt: skip
    assert turn.status == "rejected" and "not a coordinator-approvable checkpoint" in turn.answer
    from orchestrator.schemas import turn_details

    assert turn_details(turn)["rejected"][0]["type"] == "decide_approval"
    assert Interaction.objects.get(pk=ask.pk).status == "open" and testcaps.CALLS == []


def test_request_approval_rules(operator):
    own = start(
        build_plan(operator, [{"capability": "otest.write_effect", "inputs": {"label": "w"}}], autonomy="ask_mutations")
    )
    own_ask = Interaction.objects.get(plan=own)
    turn = coordinator_turn(
        user=operator, message="x", engine=scripted({"type": "request_approval", "interaction_id": own_ask.pk})
    )
    assert turn.status == "rejected" and "is yours to answer" in turn.answer
    gated = start(build_plan(operator, [{"capability": "otest.release", "inputs": {"label": "r"}}]))
    ask = Interaction.objects.get(plan=gated)
    request = {"type": "request_approval", "interaction_id": ask.pk, "user_request_quote": "ask the approvers"}
    twice = scripted(request, summary="I requested approval.")
    turn = coordinator_turn(user=operator, message="Please ask the approvers", engine=twice)
    assert turn.status == "ok" and turn.executed[0]["result"]["ok"] and "I requested approval." in turn.answer
    again = coordinator_turn(user=operator, message="Please ask the approvers", engine=scripted(request))
    assert again.status == "rejected" and f"already requested by {operator.username}" in again.answer
