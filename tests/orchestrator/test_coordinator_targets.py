"""A decision acts on what the user's words name: "approve step 3" decides step 3's ask, "cancel plan 8"
cancels plan 8 — never another ask or plan, whatever a question text, a tool result or a model says.

Red team: the offline reader found "step N" by searching each ask's question, and a question carries
the step's inputs ("Allow step 1: Read a value — key see step 3"), so "approve step 3" approved step
1; a gated ask's question names no step ("Approve: …?"), so "approve step 2" on it was "No open ask
matches step 2". And the validator let a model's decision through when its quote named another
target ("cancel plan 8" backing cancel_plan 7).
"""

import pytest

from orchestrator.coordinator.service import coordinator_turn
from orchestrator.models import Interaction, Plan
from tests.orchestrator import testcaps
from tests.orchestrator.conftest import build_plan, say, scripted, start

pytestmark = pytest.mark.django_db


def read(key: str = "k") -> dict:
    return {"capability": "otest.read_value", "inputs": {"key": key}}


def test_a_step_named_in_an_asks_inputs_is_not_that_step(client, operator):
    """Step 1's ask mentions "step 3" in its inputs; "approve step 3" must not approve it."""
    plan = start(build_plan(operator, [read("see step 3 notes"), read(), read()], autonomy="ask_all"))
    ask = Interaction.objects.get(plan=plan)
    assert ask.step.order == 1 and "step 3" in ask.question

    turn = say(client, operator, "approve step 3")

    assert [e["type"] for e in turn.executed] == ["ask_clarification"], turn.answer
    assert "No open ask matches step 3" in turn.answer
    ask.refresh_from_db()
    assert ask.status == "open" and testcaps.CALLS == []


def test_approve_step_n_finds_a_gated_ask_on_that_step(client, operator):
    """The owner's own gated step 2: presented as needing another approver, not "no ask matches"."""
    release = {"capability": "otest.release", "inputs": {"label": "x"}}
    plan = start(build_plan(operator, [read(), release]))
    ask = Interaction.objects.get(plan=plan)
    assert ask.step.order == 2 and "step 2" not in ask.question

    turn = say(client, operator, f"approve step 2 of plan {plan.pk}")

    assert [e["type"] for e in turn.executed][:1] == ["present_approval"], turn.answer
    assert turn.executed[0]["result"]["interaction_id"] == ask.pk
    assert "No open ask matches" not in turn.answer
    ask.refresh_from_db()
    assert ask.status == "open" and testcaps.CALLS == ["read_value"]


def test_a_models_decision_on_another_step_than_the_words_name_is_not_done(client, operator):
    plan = start(build_plan(operator, [read("see step 3 notes"), read(), read()], autonomy="ask_all"))
    ask = Interaction.objects.get(plan=plan)
    action = {"type": "decide_approval", "interaction_id": ask.pk, "decision": "approve"}
    turn = coordinator_turn(
        user=operator, message="approve step 3", engine=scripted({**action, "user_request_quote": "approve step 3"})
    )

    assert turn.executed == [] or all(e["type"] != "decide_approval" for e in turn.executed)
    assert any(c["check"] == "backed_by_message" and not c["ok"] for c in turn.validation)
    assert "step 1" in turn.answer and "step 3" in turn.answer
    ask.refresh_from_db()
    assert ask.status == "open" and testcaps.CALLS == []


def test_a_models_cancel_of_another_plan_than_the_words_name_is_not_done(operator):
    mine, named = build_plan(operator, [read()]), build_plan(operator, [read()])
    quote = f"cancel plan {named.pk}"
    turn = coordinator_turn(
        user=operator,
        message=quote,
        engine=scripted({"type": "cancel_plan", "plan_id": mine.pk, "user_request_quote": quote}),
    )

    assert turn.executed == []
    assert Plan.objects.get(pk=mine.pk).status == "approved" and Plan.objects.get(pk=named.pk).status == "approved"
    assert f"plan {named.pk}" in turn.answer and "To confirm" in turn.answer


def test_the_words_naming_the_same_target_still_decide(operator):
    plan = build_plan(operator, [read()])
    quote = f"cancel plan {plan.pk}"
    turn = coordinator_turn(
        user=operator,
        message=quote,
        engine=scripted({"type": "cancel_plan", "plan_id": plan.pk, "user_request_quote": quote}),
    )

    assert [e["type"] for e in turn.executed] == ["cancel_plan"]
    assert Plan.objects.get(pk=plan.pk).status == "cancelled"


@pytest.mark.parametrize(
    "message",
    [
        "skip step 2 of plan {plan}. skip step 3 of plan {plan}",
        "stop step 2 of plan {plan}. stop step 3 of plan {plan}",
        "stop step 2 of plan {plan}, stop step 3",
        "cancel plan {plan} and plan {other}",
        "plan {other} is done; skip step 2 of plan {plan}",
    ],
)
def test_a_decision_naming_several_targets_changes_nothing(client, operator, message):
    """Red team: "stop step 2. stop step 3" skipped step 2 and said nothing of step 3; "cancel plan 12
    and plan 11" cancelled plan 12 only, answering "Plan 12 is now cancelled." One at a time: the
    coordinator asks, naming what the message names, and changes nothing."""
    plan = start(build_plan(operator, [read(), read(), read()], autonomy="ask_all"))
    other = build_plan(operator, [read()])
    before = (
        sorted(Plan.objects.values_list("pk", "status")),
        sorted(Interaction.objects.values_list("pk", "status")),
        list(plan.steps.order_by("order").values_list("status", flat=True)),
    )

    turn = say(client, operator, message.format(plan=plan.pk, other=other.pk))

    assert [e["type"] for e in turn.executed] == ["ask_clarification"], turn.answer
    assert "one at a time" in turn.answer and "I changed nothing" in turn.answer
    after = (
        sorted(Plan.objects.values_list("pk", "status")),
        sorted(Interaction.objects.values_list("pk", "status")),
        list(plan.steps.order_by("order").values_list("status", flat=True)),
    )
    assert after == before


def test_approve_plan_n_on_a_draft_says_where_a_plan_is_approved(client, operator):
    """ "approve plan N" answered only "Plan N is draft. Steps: …": the coordinator approves asks, not
    plans; the answer now says so (approve it on the Plans page) and nothing changes."""
    plan = build_plan(operator, [read()], status="draft")

    turn = say(client, operator, f"approve plan {plan.pk}")

    assert [e["type"] for e in turn.executed] == ["answer"]
    assert "approve it on the Plans page" in turn.answer
    assert Plan.objects.get(pk=plan.pk).status == "draft"


def test_approve_ask_0_matches_no_ask(client, operator):
    """ "approve ask 0" was read as no ask named, and answered about the plan in focus."""
    plan = start(build_plan(operator, [read()], autonomy="ask_all"))
    ask = Interaction.objects.get(plan=plan)

    turn = say(client, operator, "approve ask 0")

    assert [e["type"] for e in turn.executed] == ["ask_clarification"] and "No open ask matches ask 0" in turn.answer
    assert Interaction.objects.get(pk=ask.pk).status == "open"


@pytest.mark.parametrize("message", ["stop step 0", "skip step 0", "approve step 0"])
def test_step_0_names_a_step_that_is_not_there(client, operator, message):
    """ "stop step 0" was read as no step named: a stop of the whole plan in focus (cancelled)."""
    plan = start(build_plan(operator, [read(), read()], autonomy="ask_all"))
    say(client, operator, f"what about plan {plan.pk}?")  # plan in focus

    turn = say(client, operator, message)

    assert {e["type"] for e in turn.executed} <= {"answer", "ask_clarification"}, turn.answer
    assert "step 0" in turn.answer
    assert Plan.objects.get(pk=plan.pk).status == "paused"
    assert Interaction.objects.get(plan=plan).status == "open"
