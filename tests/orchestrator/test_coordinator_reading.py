"""The reading of a message, and the offline demo's keyword stand-in for it.

The scenario suite hands the fake gateway readings directly; the offline demo (no model
configured) reads the message with `keyword_reading` first. These tests pin what that stand-in
makes of the scenario phrases, so the demo behaves like the suite, and that a reading is checked.
The stand-in also names the words that ask for a mutation (`quote`, what a model puts in
`user_request_quote`); tests/security/test_coordinator_wording.py covers what must never mutate.
"""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.coordinator.profiles import PROFILES
from orchestrator.coordinator.reading import ACTS, Reading, keyword_reading
from tests.orchestrator.test_coordinator_scenarios import (
    APPLY,
    EXPLAIN_ONLY,
    NO_DOWNTIME,
    REVISE_UI,
    STOP,
    STOP_SMALLER,
    WHAT_HAPPENED,
)

SPECIALISTS = {name: profile.packet() for name, profile in PROFILES.items()}


@pytest.mark.parametrize(
    ("message", "reading", "quote"),
    [
        ("What happened?", WHAT_HAPPENED, ""),
        ("Stop that one, use a smaller agent", STOP_SMALLER, "Stop that one"),
        ("Stop that one", STOP, "Stop that one"),
        ("Apply it", APPLY, "Apply it"),
        ("Don't start work yet, just explain the plan", EXPLAIN_ONLY, ""),
        ("Use the previous plan but change the UI behaviour", REVISE_UI, "*"),
        ("Continue the last run with this added constraint: no downtime", NO_DOWNTIME, "*"),
        ("What happened on P-02?", Reading("question", equipment=("P-02",)), ""),
    ],
)
def test_keyword_reading_of_the_scenario_phrases(message, reading, quote):
    """The scenario readings, plus the words quoted as the request ("*": the whole message)."""
    assert keyword_reading(message, SPECIALISTS) == replace(reading, quote=message if quote == "*" else quote)


def test_approving_names_the_checkpoint_the_user_named():
    step = keyword_reading("yes, approve step 2", SPECIALISTS)
    assert (step.act, step.step, step.quote) == ("proceed", 2, "approve step 2")
    ask = keyword_reading("OK, approve ask 12 on plan 3", SPECIALISTS)
    assert (ask.act, ask.ask_id, ask.plan_id, ask.quote) == ("proceed", 12, 3, "approve ask 12 on plan 3")


def test_keyword_reading_of_a_delegation_names_profiles_from_the_packet_roles():
    research = keyword_reading("Research this and have a reviewer check it", SPECIALISTS)
    assert research.act == "delegate" and "reviewer" in research.profiles
    assert set(research.profiles) <= set(SPECIALISTS)
    write = keyword_reading("Write the repair order for work order 12", SPECIALISTS)
    assert write == Reading(
        "delegate",
        text="Write the repair order for work order 12",
        profiles=("work_order_generator",),
        work_order_id=12,
        quote="Write the repair order for work order 12",
    )


def test_keyword_reading_of_a_request_for_new_work():
    goal = "raise the P-02 vibration alert limit to 4.8 mm/s"
    assert keyword_reading(f"Plan: {goal}", SPECIALISTS) == Reading(
        "plan", text="R" + goal[1:], equipment=("P-02",), quote=f"Plan: {goal}"
    )
    assert keyword_reading(f"Make a plan to {goal}", SPECIALISTS).text == "R" + goal[1:]
    assert keyword_reading("Plan", SPECIALISTS).act == "unclear"  # nothing to plan: ask, never go on


def test_a_reading_with_an_unknown_act_is_refused():
    with pytest.raises(ValueError, match="act must be one of"):
        Reading("teleport")


def test_equipment_tags_are_read_whatever_their_case():
    from orchestrator.planning.cells import equipment_tags

    assert equipment_tags("is p-02 worse than P-02 or cv-03? (see WO 12)") == ["P-02", "CV-03"]
    assert keyword_reading("what happened on p-02", SPECIALISTS).equipment == ("P-02",)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.text(max_size=40))
def test_any_text_reads_without_error(message, quote):
    """Whatever a user types (any unicode, stray quote marks), the reader and the quote check answer."""
    from orchestrator.coordinator.wording import quote_backing

    assert keyword_reading(message, SPECIALISTS).act in ACTS
    assert isinstance(quote_backing(quote, message), str)
