"""A coordinator turn whose action was refused (or not applicable) says so first, never the summary
of what it meant to do.

The walkthrough's defect: "stop that one" about a plan that had completed answered with the
headline "Stopping plan 28." and only then "Not done: cancel_plan — plan 28 is already completed".
The summary is written before the validator looks at the state (a model's, or the offline
stand-in's when the plan finished after it read the list); now a refused or failed mutation leads
the answer with the fact — "Nothing was stopped: plan 28 is already completed." — and the
summary is left out. The same for the other verbs of that shape.
"""

from __future__ import annotations

import pytest

from core.agents.engines.fake import FakeEngine, FakeReply
from orchestrator.choices import PlanStatus
from orchestrator.coordinator.service import coordinator_turn
from orchestrator.models import Interaction, Plan
from orchestrator.offline.gateway import offline_coordinator
from orchestrator.services.plans import plan_transition
from tests.orchestrator.conftest import COORDINATOR_TURNS, build_plan, say, start

pytestmark = pytest.mark.django_db
READ = {"capability": "otest.read_value", "inputs": {"key": "k"}}


def headline(client, turn) -> str:
    """What the chat shows first: the turn's details headline, through the API."""
    return client.get(f"{COORDINATOR_TURNS}/{turn.pk}").json()["details"]["headline"]


def model_says(summary: str, action: dict) -> FakeEngine:
    """A model that read the plans and chose `action`, summing it up as `summary`."""
    plan = {"summary": summary, "actions": [action], "references": {}}
    return FakeEngine(
        script=[FakeReply(tool_calls=[("list_plans", {})]), FakeReply(tool_calls=[("submit_action_plan", plan)])]
    )


def test_stop_that_one_when_the_plan_completed_after_the_offline_stand_in_read_it(client, operator):
    plan = build_plan(operator, [READ], status=PlanStatus.RUNNING)

    def the_worker_finishes_it_meanwhile(state):  # the offline stand-in, with the plan done before validation
        reply = offline_coordinator(state)
        if any(name == "submit_action_plan" for name, _ in reply.tool_calls):
            plan_transition(plan=Plan.objects.get(pk=plan.pk), to_status=PlanStatus.COMPLETED, actor=None)
        return reply

    engine = FakeEngine(policies={"coordinator": the_worker_finishes_it_meanwhile})
    turn = coordinator_turn(user=operator, message="stop that one", engine=engine)

    assert turn.action_plan["summary"] == f"Stopping plan {plan.pk}."  # what it meant to do
    client.force_login(operator)
    assert headline(client, turn) == f"Nothing was stopped: plan {plan.pk} is already completed."
    assert "Stopping" not in turn.answer and turn.executed == []
    assert Plan.objects.get(pk=plan.pk).status == PlanStatus.COMPLETED


def test_stop_that_one_about_a_completed_plan_offline(client, operator):
    plan = start(build_plan(operator, [READ]))
    assert plan.status == PlanStatus.COMPLETED
    turn = say(client, operator, "stop that one")
    assert headline(client, turn) == f"Nothing was stopped: plan {plan.pk} is already completed."


def test_skip_a_step_of_a_cancelled_plan_offline(client, operator):
    plan = build_plan(operator, [READ, READ], status=PlanStatus.DRAFT)
    plan_transition(plan=plan, to_status=PlanStatus.CANCELLED, actor=operator)  # step 2 stays pending
    turn = say(client, operator, f"skip step 2 of plan {plan.pk}")
    assert headline(client, turn) == f"Nothing was skipped: plan {plan.pk} is already cancelled."
    assert "Skipping" not in turn.answer and [e["type"] for e in turn.executed] == ["answer"]


def _completed(operator) -> Plan:
    return build_plan(operator, [READ], status=PlanStatus.COMPLETED)


@pytest.mark.parametrize(
    ("message", "summary", "action", "plan_of", "said"),
    [
        ("stop that one", "Stopping plan {id}.", "cancel_plan", _completed,
         "Nothing was stopped: plan {id} is already completed."),
        ("cancel plan {id}", "Cancelling plan {id}.", "cancel_plan", _completed,
         "Nothing was cancelled: plan {id} is already completed."),
        ("resume plan {id}", "Resuming plan {id}.", "resume_plan", _completed,
         "Nothing was resumed: plan {id} is completed; only a paused plan can be resumed."),
        ("pause plan {id}", "Pausing plan {id}.", "pause_plan",
         lambda owner: build_plan(owner, [READ], status=PlanStatus.DRAFT),
         "Nothing was paused: plan {id} is draft; only a running plan can be paused."),
    ],
)  # fmt: skip
def test_a_model_summary_of_a_refused_plan_move_is_not_the_headline(
    client, operator, message, summary, action, plan_of, said
):
    plan = plan_of(operator)
    words = message.format(id=plan.pk)
    chosen = {"type": action, "plan_id": plan.pk, "user_request_quote": words}
    turn = coordinator_turn(user=operator, message=words, engine=model_says(summary.format(id=plan.pk), chosen))
    client.force_login(operator)
    assert headline(client, turn) == said.format(id=plan.pk)
    assert summary.format(id=plan.pk) not in turn.answer and turn.executed == []
    assert turn.status == "rejected"


def test_approve_it_on_an_ask_of_a_cancelled_plan(client, operator):
    plan = start(build_plan(operator, [READ], autonomy="ask_all"))
    ask = Interaction.objects.get(plan=plan)
    plan_transition(plan=plan, to_status=PlanStatus.CANCELLED, actor=operator)
    chosen = {
        "type": "decide_approval",
        "interaction_id": ask.pk,
        "decision": "approve",
        "user_request_quote": "approve it",
    }
    turn = coordinator_turn(user=operator, message="approve it", engine=model_says("Approving it.", chosen))
    client.force_login(operator)
    assert (
        headline(client, turn) == f"Nothing was approved: interaction {ask.pk} is closed: plan {plan.pk} is cancelled."
    )
    assert "Approving" not in turn.answer


def test_a_done_move_keeps_the_summary(client, operator):
    plan = build_plan(operator, [READ], status=PlanStatus.DRAFT)
    chosen = {"type": "cancel_plan", "plan_id": plan.pk, "user_request_quote": "cancel it"}
    turn = coordinator_turn(user=operator, message="cancel it", engine=model_says("Cancelling the draft.", chosen))
    client.force_login(operator)
    assert headline(client, turn) == "Cancelling the draft."
    assert f"Plan {plan.pk} is now cancelled." in turn.answer
