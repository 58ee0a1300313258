"""The offline demo's coordinator against the scenario suite, through the service contract.

The scenario suite hands the fake gateway a `Reading` per turn; the offline demo (no model
configured) runs the registered coordinator stand-in, which reads the words itself first. These
tests hold the demo to the suite by what the turn does — the tools it read, the actions that passed
validation, the plans' states after — not by what the stand-in makes of a phrase. What must never
mutate, whatever reads the words, is the validator's job: tests/security/test_coordinator_wording.py
and test_coordinator_reported_speech.py.
"""

import pytest
from django.db import transaction
from hypothesis import example, given, settings
from hypothesis import strategies as st

from orchestrator.coordinator.profiles import PROFILES
from orchestrator.coordinator.service import coordinator_turn
from orchestrator.coordinator.wording import quote_backing
from orchestrator.models import Interaction, Plan
from orchestrator.offline.reading import ACTS, Reading, keyword_reading
from tests.orchestrator.conftest import build_plan, start
from tests.orchestrator.test_coordinator_scenarios import (
    APPLY,
    EXPLAIN_ONLY,
    NO_DOWNTIME,
    STOP_SMALLER,
    WHAT_HAPPENED,
    _investigation,
    allowed,
    tools,
    turn_on,
)

SPECIALISTS = {name: profile.packet() for name, profile in PROFILES.items()}


def _plans() -> list[tuple[int, str, str]]:
    """Plans in creation order, numbered by position: the rolled-back suite turn still used up a
    sequence value on PostgreSQL, so the demo's new plan gets another id for the same plan."""
    rows = Plan.objects.order_by("pk").values_list("status", "goal")
    return [(position, status, goal) for position, (status, goal) in enumerate(rows)]


def suite_then_demo(operator, message: str, reading: Reading):
    """What the suite's turn (the gateway given `reading`) does, rolled back; then what the offline
    demo's turn (no engine given: the registered stand-in reads the words) does on the same state."""
    with transaction.atomic():
        suite = turn_on(operator, message, reading)
        expected = (tools(suite), allowed(suite), _plans())
        transaction.set_rollback(True)
    demo = coordinator_turn(user=operator, message=message)
    return expected, (tools(demo), allowed(demo), _plans())


@pytest.mark.django_db
def test_the_demo_stops_and_re_delegates_like_the_suite(operator, django_capture_on_commit_callbacks):
    _investigation(operator, django_capture_on_commit_callbacks)
    expected, demo = suite_then_demo(operator, "Stop that one, use a smaller agent", STOP_SMALLER)
    assert demo == expected and demo[1] == ["cancel_plan", "delegate"]


@pytest.mark.django_db
def test_the_demo_approves_a_bounded_ask_like_the_suite(operator):
    plan = start(build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], autonomy="ask_all"))
    expected, demo = suite_then_demo(operator, "Apply it", APPLY)
    assert demo == expected and demo[1] == ["decide_approval"]
    assert Interaction.objects.get(plan=plan).status != "open"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("message", "reading", "status", "actions"),
    [
        ("Don't start work yet, just explain the plan", EXPLAIN_ONLY, "draft", ["answer"]),
        ("What happened?", WHAT_HAPPENED, "draft", ["answer"]),
        ("Continue the last run with this added constraint: no downtime", NO_DOWNTIME, "running", ["attach_guidance"]),
    ],
    ids=["explain-only", "question", "guidance"],
)
def test_the_demo_explains_answers_and_guides_like_the_suite(operator, message, reading, status, actions):
    if status == "running":
        start(build_plan(operator, [{"capability": "otest.start_job", "inputs": {"ref": "j"}}]))
    else:
        build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], status="draft")
    expected, demo = suite_then_demo(operator, message, reading)
    assert demo == expected and demo[1] == actions


@pytest.mark.django_db
def test_words_the_demo_does_not_understand_change_nothing(operator, django_capture_on_commit_callbacks):
    """Hostile/unknown wording offline: a clarifying answer, never a mutation."""
    plan, _, _ = _investigation(operator, django_capture_on_commit_callbacks)
    turn = coordinator_turn(user=operator, message="Hör damit auf und nimm einen kleineren Agenten")
    assert allowed(turn) == ["ask_clarification"]
    assert Plan.objects.get(pk=plan.pk).status == "running" and Plan.objects.count() == 1


def test_a_reading_with_an_unknown_act_is_refused():
    with pytest.raises(ValueError, match="act must be one of"):
        Reading("teleport")


def test_equipment_tags_are_read_whatever_their_case():
    from orchestrator.planning.cells import equipment_tags

    assert equipment_tags("is p-02 worse than P-02 or cv-03? (see WO 12)") == ["P-02", "CV-03"]


def test_a_trains_unit_is_its_own_tag():
    """P-02A (unit A of the P-02 pair) is a tag of its own, not P-02 and not nothing."""
    from orchestrator.planning.cells import equipment_tags

    assert equipment_tags("compare P-02A with p-02b and P-02") == ["P-02A", "P-02B", "P-02"]
    assert equipment_tags("P-02AB, PX-0201 and line 2") == []


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.text(max_size=40))
@example("²", "")  # a digit to str.isdigit, not to int(): once a crash of the choice reading
@example("option ²", "option")
def test_any_text_reads_without_error(message, quote):
    """Whatever a user types (any unicode, stray quote marks), the reader and the quote check answer."""
    assert keyword_reading(message, SPECIALISTS).act in ACTS
    assert isinstance(quote_backing(quote, message), str)


@pytest.mark.parametrize(
    "message",
    [
        "cancel plan 6. just kidding",
        "Cancel plan 6. Actually no.",
        "cancel plan 6, just kidding",
        "Cancel plan 6. Translate that into German.",
        "Approve it. Wait, not yet",
        "skip step 2 of plan 6. scratch that",
        "cancel plan ١٨",
        "approve step ٢ of plan 6",
    ],
)
def test_words_after_a_decision_it_does_not_understand_leave_it_unclear(message):
    """Red team: "cancel plan 6. just kidding" cancelled the plan. Trailing words can take an
    instruction back or make it the object of another request; the offline reader asks instead.
    Ids are read in ASCII digits only ("plan ١٨" was plan 18)."""
    assert keyword_reading(message, SPECIALISTS).act in ("unclear", "explain")  # ask or explain, never act


@pytest.mark.parametrize(
    ("message", "act"),
    [
        ("cancel plan 6. thanks", "stop"),
        ("Stop that one, use a smaller agent", "stop"),
        ("Approve it, please", "proceed"),
        ("stop step 2. stop it now", "stop"),  # "stop step 2. stop step 3" names two: test_coordinator_targets
    ],
)
def test_a_decision_followed_by_what_the_reader_understands_still_reads(message, act):
    assert keyword_reading(message, SPECIALISTS).act == act


@pytest.mark.parametrize(
    "message", ["Plan 6 looks fine", "plan #6", "Plan 6 abbrechen", "Plan looks good", "plan-6 ok"]
)
def test_a_plan_named_or_talked_about_is_not_new_work(message):
    """Red team: "Plan 7 abbrechen" (German: cancel plan 7) and "plan 7 is wrong" drafted a new plan
    with the goal "7 abbrechen": a sentence opening on "plan" read as "plan: <goal>"."""
    assert keyword_reading(message, SPECIALISTS).act != "plan"


@pytest.mark.parametrize(
    ("message", "goal"),
    [
        ("Plan: check the P-02 signals", "Check the P-02 signals"),
        ("plan - check the P-02 signals", "Check the P-02 signals"),
        ("plan to check the P-02 signals", "Check the P-02 signals"),
        ("Plan the P-02 bearing swap", "The P-02 bearing swap"),
        ("make a plan to check P-02", "Check P-02"),
        ("Plan: 7 pumps need a check", "7 pumps need a check"),
    ],
)
def test_an_instruction_to_plan_still_reads_as_one(message, goal):
    reading = keyword_reading(message, SPECIALISTS)
    assert (reading.act, reading.text) == ("plan", goal)
