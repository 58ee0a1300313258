"""The coordinator presents and answers a plan's `choice` ("which one did you mean?"), and answers about
a plan the user names (issue 11), driven by the user's words through POST /api/v1/aria/coordinator/turns
(the offline reader, the fake gateway, the validator, the same answer service as the Plans page).

Beside each, the hostile case: another user's choice, an answer not among the options, a model forcing
an answer, and a choice only an approver may answer (none exists in the product; the validator uses the
answer route's own check, so one would be refused for its owner).
"""

import pytest

from core.access import OPERATOR
from core.models import AuditRecord
from orchestrator.models import CoordinatorTurn, Interaction, Plan, PlanStep
from tests.fakes.agent_kit import engine_settings
from tests.fakes.anthropic_server import AnthropicFakeServer, anthropic_stream, tool_use
from tests.orchestrator.conftest import build_plan, done, say
from tests.workorders import factories as f

pytestmark = pytest.mark.django_db
API = "/api/v1/aria"
SIGNALS = "workorders.get_current_signals"


def draft_choosing(client, user, *tags):
    cells = [f.make_cell(tag) for tag in tags or ("P-01", "P-02")]
    client.force_login(user)
    body = client.post(f"{API}/plans", {"goal": "Show the vibration of the pump"}, content_type="application/json")
    plan = Plan.objects.get(pk=body.json()["id"])
    ask = Interaction.objects.get(plan=plan, kind="choice")
    return plan, ask, cells


def untouched(plan, ask):
    ask.refresh_from_db()
    return ask.status == "open" and [s.capability for s in PlanStep.objects.filter(plan=plan)] == [
        "workorders.find_cells"
    ]


def test_what_do_you_need_from_me_says_the_question_and_its_options(client, operator):
    plan, ask, _ = draft_choosing(client, operator)
    turn = say(client, operator, "What do you need from me?")
    assert done(turn) == [("answer", True), ("present_approval", True)], turn.answer
    assert (
        f"Plan {plan.pk} waits for your choice (ask {ask.pk}): Several cells are a pump. Which one did you mean? "
        "Options: 1. P-01; 2. P-02. Say which, e.g. 'the second one' or 'P-02'." in turn.answer
    )
    assert untouched(plan, ask)


@pytest.mark.parametrize(
    ("words", "picked"),
    [
        ("The second one", "P-02"),
        ("option 2", "P-02"),
        ("P-01", "P-01"),
        ("I meant P-02", "P-02"),
        ("the first one", "P-01"),
    ],
)
def test_the_users_words_answer_the_choice_through_the_answer_path(client, operator, words, picked):
    plan, ask, cells = draft_choosing(client, operator)
    turn = say(client, operator, words)
    assert done(turn) == [("answer_choice", True)], turn.answer
    assert f"Ask {ask.pk} answered with {picked}: plan {plan.pk} was planned again (1 step(s), draft)" in turn.answer
    ask.refresh_from_db()
    assert ask.status == "answered" and ask.answer["choice"] == picked and ask.answered_by == operator
    cell = next(c for c in cells if c.tag == picked)
    assert [(s.capability, s.inputs) for s in PlanStep.objects.filter(plan=plan)] == [(SIGNALS, {"cell_id": cell.pk})]
    assert Plan.objects.get(pk=plan.pk).constraints["resolved"] == {"the pump": picked}
    assert AuditRecord.objects.filter(action="plan.replanned", actor=operator, target_id=str(plan.pk)).count() == 1
    assert AuditRecord.objects.filter(action="interaction.approve", target_id=str(ask.pk)).count() == 1
    client.force_login(operator)
    assert client.post(f"{API}/plans/{plan.pk}/approve").status_code == 200  # the draft is approvable now


def test_an_option_named_by_its_tag(client, operator):
    _, ask, _ = draft_choosing(client, operator, "CV-03", "P-02")
    assert ask.options == ["CV-03", "P-02"]
    turn = say(client, operator, "cv-03")
    assert done(turn) == [("answer_choice", True)], turn.answer
    assert Interaction.objects.get(pk=ask.pk).answer["choice"] == "CV-03"


def test_hostile_words_that_name_no_option_or_are_not_the_users_change_nothing(client, operator):
    plan, ask, _ = draft_choosing(client, operator)
    for words in ("the fifth one", "P-09", 'You said "the second one"', "Don't pick the second one", "the second one?"):
        turn = say(client, operator, words)
        assert not any(e["type"] == "answer_choice" for e in turn.executed), (words, turn.answer)
        assert untouched(plan, ask), words
    fifth = CoordinatorTurn.objects.get(message="the fifth one")
    assert (
        f"'option 5' is not one of the options of ask {ask.pk}" in fifth.answer and "1. P-01; 2. P-02" in fifth.answer
    )


def test_hostile_another_users_choice_is_not_theirs_to_answer(client, operator, make_user):
    plan, ask, _ = draft_choosing(client, operator)
    mallory = make_user("mallory", OPERATOR)
    turn = say(client, mallory, "The second one")
    assert not any(e["type"] == "answer_choice" for e in turn.executed) and "Several cells" not in turn.answer
    asked = say(client, mallory, "What do you need from me?")
    assert "Nothing waits for you" in asked.answer and f"ask {ask.pk}" not in asked.answer
    assert untouched(plan, ask)


def _forced(action):
    """A model whose action plan is `action`, over the Messages API the route's engine calls."""
    plan = {"summary": "Answering the choice.", "actions": [action], "references": {}}

    def respond(recorded):
        return anthropic_stream([tool_use("toolu_1", "submit_action_plan", plan)], stop_reason="tool_use")

    return respond


def _through_the_route_with(client, user, action, message):
    with (
        AnthropicFakeServer(responder=_forced(action)) as server,
        engine_settings(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=server.url, ARIA_ENGINE="anthropic"),
    ):
        return say(client, user, message)


def test_hostile_a_model_forcing_an_answer_is_refused_by_code(client, operator, make_user):
    plan, ask, _ = draft_choosing(client, operator)
    base = {"type": "answer_choice", "interaction_id": ask.pk, "user_request_quote": "the second one"}
    # not one of the options: refused, with the options named
    wrong = _through_the_route_with(client, operator, {**base, "choice": "P-09"}, "the second one")
    assert wrong.status == "rejected" and wrong.executed == []
    assert f"'P-09' is not one of the options of ask {ask.pk} (1. P-01, 2. P-02)" in wrong.answer
    # another user's choice: invisible to them
    mallory = make_user("mallory", OPERATOR)
    theirs = _through_the_route_with(client, mallory, {**base, "choice": "P-02"}, "the second one")
    assert theirs.status == "rejected" and f"interaction {ask.pk} does not exist or is not visible" in theirs.answer
    # the words do not ask for it: only a confirm card
    unasked = _through_the_route_with(client, operator, {**base, "choice": "P-02"}, "which one is worse?")
    assert unasked.executed == [] and f"To confirm: answer ask {ask.pk} with 'P-02'" in unasked.answer
    assert untouched(plan, ask)


def test_hostile_a_choice_only_an_approver_may_answer_is_refused_for_its_operator_owner(client, operator):
    plan, ask, _ = draft_choosing(client, operator)
    Interaction.objects.filter(pk=ask.pk).update(required_scope="approver")
    action = {"type": "answer_choice", "interaction_id": ask.pk, "choice": "P-02", "user_request_quote": "P-02"}
    turn = _through_the_route_with(client, operator, action, "P-02")
    assert turn.status == "rejected" and "policy: The plan owner cannot approve their own gated step" in turn.answer
    assert untouched(plan, ask)


# --- a plan the user names is answered about, not "which workstream?" --------------------------------


def test_a_named_plan_that_is_not_running_is_answered_about(client, operator, make_user):
    build_plan(operator, [{"capability": "otest.start_job", "inputs": {"ref": "a"}}], status="running")
    build_plan(operator, [{"capability": "otest.start_job", "inputs": {"ref": "b"}}], status="running")
    old = build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], status="completed")
    turn = say(client, operator, f"What about plan {old.pk}?")
    assert "Which one do you mean?" not in turn.answer
    assert f"Plan {old.pk} 'test goal' is completed." in turn.answer
    assert f"draft a copy ('same as plan {old.pk} but without step 2')" in turn.answer
    carry = say(client, operator, f"Carry on with plan {old.pk}")
    assert f"Nothing is in flight to continue: plan {old.pk} is completed. It is over" in carry.answer
    draft = build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], status="draft")
    shown = say(client, operator, f"What about plan {draft.pk}?")
    assert f"Plan {draft.pk} 'test goal' is draft" in shown.answer and "approve it on the Plans page" in shown.answer
    # another user's plan number is not theirs to hear about
    other = say(client, make_user("mallory", OPERATOR), f"What about plan {old.pk}?")
    assert f"Plan {old.pk} is not among your plans" in other.answer and "test goal" not in other.answer
