"""The coordinator for the person who must decide someone else's gated ask (an approver who also
holds the operator scope, so they may talk to the coordinator).

Red team, typed into the coordinator box: "what do you need from me?" answered "I did not act, so
nothing was changed: plan 14 not visible" (the answer cited the requester's plan, which the approver
cannot open, so the whole turn was blocked); "approve ask 3" answered "only someone else with the
approver scope can decide it" — to that very approver — and "asked the approvers to decide ask 3",
marking the ask requested by the approver themself (so its requester's own request was refused later).
The coordinator still never decides a gated ask: it says the approver decides it on the Plans page.
"""

import pytest

from core.access import APPROVER, OPERATOR
from core.agents.engines.fake import FakeEngine, FakeReply
from core.models import AuditRecord
from orchestrator.coordinator.service import coordinator_turn
from orchestrator.models import Interaction
from tests.orchestrator import testcaps
from tests.orchestrator.conftest import build_plan, say, start

pytestmark = pytest.mark.django_db


@pytest.fixture
def gated_ask(operator) -> Interaction:
    """olga's plan waits on a gated release: someone else with the approver scope decides it."""
    plan = start(build_plan(operator, [{"capability": "otest.release", "inputs": {"label": "x"}}]))
    ask = Interaction.objects.get(plan=plan)
    assert ask.required_scope == APPROVER and ask.status == "open"
    return ask


@pytest.fixture
def decider(make_user):
    return make_user("dora", OPERATOR, APPROVER)


def test_what_waits_for_the_approver_lists_the_gated_ask(client, decider, gated_ask):
    turn = say(client, decider, "what do you need from me?")

    assert turn.status == "ok", turn.answer
    assert [e["type"] for e in turn.executed] == ["answer", "present_approval"]
    assert turn.executed[1]["result"]["interaction_id"] == gated_ask.pk
    assert "not visible" not in turn.answer and "yours to decide" in turn.answer


def test_approve_ask_n_tells_the_approver_to_decide_it_and_requests_nothing(client, decider, gated_ask):
    turn = say(client, decider, f"approve ask {gated_ask.pk}")

    assert [e["type"] for e in turn.executed] == ["present_approval"], turn.answer
    assert "yours to decide" in turn.answer and "only someone else" not in turn.answer
    gated_ask.refresh_from_db()
    assert gated_ask.status == "open" and "approval_requested_by" not in gated_ask.evidence
    assert not AuditRecord.objects.filter(action="interaction.approval_requested").exists()
    assert testcaps.CALLS == []


def test_the_requester_is_still_told_someone_else_decides(client, operator, gated_ask):
    turn = say(client, operator, f"approve ask {gated_ask.pk}")

    assert [e["type"] for e in turn.executed] == ["present_approval", "request_approval"], turn.answer
    assert "only someone else with the approver scope can decide it" in turn.answer
    gated_ask.refresh_from_db()
    assert gated_ask.status == "open" and gated_ask.evidence["approval_requested_by"] == "olga"


def test_a_model_cannot_have_the_decider_request_their_own_decision(decider, gated_ask):
    action = {"type": "request_approval", "interaction_id": gated_ask.pk, "user_request_quote": "ask for approval"}
    submit = {"summary": "Requested.", "actions": [action], "references": {}}
    engine = FakeEngine(
        script=[FakeReply(tool_calls=[("list_plans", {})]), FakeReply(tool_calls=[("submit_action_plan", submit)])]
    )

    turn = coordinator_turn(user=decider, message="ask for approval", engine=engine)

    assert turn.executed == [] and turn.status == "rejected"
    assert any(c["check"] == "state" and "yours to decide" in c["reason"] for c in turn.validation)
    gated_ask.refresh_from_db()
    assert "approval_requested_by" not in gated_ask.evidence
