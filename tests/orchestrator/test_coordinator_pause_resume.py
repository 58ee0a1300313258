"""The offline coordinator on "pause plan N" / "resume plan N", through the service a turn takes.

Before, the offline reader did not know either word: "pause plan 4" was answered "What do you want
me to do?" although the coordinator has pause_plan and resume_plan. Now it pauses a running plan
and resumes a paused one — the same moves a model proposes, through the same validation — and for a
plan in any other state it leads with why nothing changed. A negation, a take-back or a question
still changes nothing, and another user's plan is not found.
"""

import pytest

from core.access import OPERATOR
from orchestrator.coordinator.service import coordinator_turn
from orchestrator.models import Plan
from orchestrator.offline.reading import Reading
from tests.orchestrator.conftest import build_plan
from tests.orchestrator.test_coordinator_scenarios import _investigation, allowed, turn_on

pytestmark = pytest.mark.django_db


def status(plan: Plan) -> str:
    return Plan.objects.get(pk=plan.pk).status


def test_pause_then_resume_a_running_plan_by_its_number(operator, django_capture_on_commit_callbacks):
    plan, _, _ = _investigation(operator, django_capture_on_commit_callbacks)
    assert plan.status == "running"

    turn = coordinator_turn(user=operator, message=f"pause plan {plan.pk}")
    assert allowed(turn) == ["pause_plan"] and turn.status == "ok"
    assert status(plan) == "paused"

    with django_capture_on_commit_callbacks(execute=False):
        turn = coordinator_turn(user=operator, message=f"please resume plan {plan.pk}")
    assert allowed(turn) == ["resume_plan"] and turn.status == "ok"
    assert status(plan) == "running"


def test_the_demo_pauses_like_the_suite(operator, django_capture_on_commit_callbacks):
    plan, _, _ = _investigation(operator, django_capture_on_commit_callbacks)
    suite = turn_on(operator, f"pause plan {plan.pk}", Reading("pause", plan_id=plan.pk))
    assert allowed(suite) == ["pause_plan"] and status(plan) == "paused"


def test_pause_it_pauses_the_plan_in_focus(operator, django_capture_on_commit_callbacks):
    plan, _, _ = _investigation(operator, django_capture_on_commit_callbacks)
    coordinator_turn(user=operator, message=f"what is plan {plan.pk} doing?")  # puts it in focus
    turn = coordinator_turn(user=operator, message="pause it")
    assert allowed(turn) == ["pause_plan"] and status(plan) == "paused"


def test_a_plan_that_is_not_running_is_not_paused_and_the_answer_says_why_first(operator):
    plan = build_plan(operator, [{"capability": "workorders.find_cells", "inputs": {"query": "P-07"}}], status="draft")
    turn = coordinator_turn(user=operator, message=f"pause plan {plan.pk}")
    assert status(plan) == "draft" and "pause_plan" not in allowed(turn)
    assert turn.answer.startswith(f"Nothing was paused: plan {plan.pk} is draft.\n")
    assert turn.answer.count("Nothing was paused") == 1 and "You can approve it on the Plans page" in turn.answer

    turn = coordinator_turn(user=operator, message=f"resume plan {plan.pk}")
    assert status(plan) == "draft" and "resume_plan" not in allowed(turn)
    assert turn.answer.startswith(f"Nothing was resumed: plan {plan.pk} is draft.")


@pytest.mark.parametrize(
    "message",
    [
        "don't pause plan {id}",
        "pause plan {id}. just kidding",
        "should I pause plan {id}?",
        "what if we pause plan {id}",
        "Pausiere Plan {id}",
        "pause plan {id} and plan {other}",
    ],
)
def test_words_that_do_not_ask_to_pause_change_nothing(operator, django_capture_on_commit_callbacks, message):
    plan, _, _ = _investigation(operator, django_capture_on_commit_callbacks)
    other = build_plan(operator, [{"capability": "workorders.find_cells", "inputs": {"query": "P-07"}}])
    turn = coordinator_turn(user=operator, message=message.format(id=plan.pk, other=other.pk))
    assert not {"pause_plan", "resume_plan"} & set(allowed(turn))
    assert status(plan) == "running" and status(other) == "approved"


def test_another_users_plan_is_not_paused(operator, make_user, django_capture_on_commit_callbacks):
    plan, _, _ = _investigation(operator, django_capture_on_commit_callbacks)
    stranger = make_user("mallory", OPERATOR)
    turn = coordinator_turn(user=stranger, message=f"pause plan {plan.pk}")
    assert allowed(turn) == ["answer"] and status(plan) == "running"
    assert f"Plan {plan.pk} is not among your plans" in turn.answer
