"""The offline coordinator is safe by default (issue 9, item 4): messages typed as a user types them,
sent through the coordinator turn service the chat drawer and the Plans box call, on the offline
engine (no model key), against a state with one open coordinator-approvable ask.

Seen before: a sentence the keyword reader did not recognise fell through to "proceed" and approved
the ask — for "wait and only describe what you would do" and for a quoted earlier "approve it".
Now a question is answered, a negation / supposition / "only describe" is explained, quoted or
reported words are not the user's request, and anything else gets a clarifying question. Only an
unambiguous approval in the user's own words approves; nothing else changes any plan, step or ask.
"""

import pytest

from core.models import AuditRecord
from orchestrator.coordinator.service import coordinator_turn
from orchestrator.models import Interaction, Plan, PlanStep
from orchestrator.services.interactions import interaction_answer
from tests.orchestrator import testcaps
from tests.orchestrator.conftest import build_plan, start

pytestmark = pytest.mark.django_db
READ = {"capability": "otest.read_value", "inputs": {"key": "k"}}
NOT_ACTING = {"answer", "ask_clarification", "present_approval"}

NEVER_ACT = [
    # questions
    "What happened?",
    "Is step 2 waiting on me?",
    "approve it?",
    "Can you approve it",
    "Could you approve step 2 please",
    "Should I approve it?",
    "why is it paused",
    # negations
    "don't approve it",
    "Do not approve it yet",
    "not yet",
    "Never approve this",
    "No",
    "No, approve it later",
    "dont approve",
    "Don’t approve it",
    "Approve it. Actually, don't.",
    # quoted or reported words
    'Earlier I wrote "approve it" — what did that do?',
    'You said "approve it"',
    "> approve it",
    '"approve it"',
    "'approve it'",
    "“Approve it”",
    "«approve step 2»",
    "I wrote approve it yesterday",
    "My last message said approve it",
    "The log says approve it",
    # hypotheticals, conditions, "only describe"
    "Wait and only describe what you would do",
    "What would happen if I approved it?",
    "Would you approve it",
    "if I said approve it, what happens",
    "describe what you would do",
    "Suppose I approve it",
    "Imagine we approved step 2",
    "hold on",
    "approve it if the readings look fine",
    "Explain the plan before you approve anything",
    # typos
    "aprove it",
    "approv it",
    "aproove step 2",
    "apprve",
    # other languages (the offline reader is English only: it asks)
    "Genehmige es bitte",
    "Ja, genehmigen",
    "Bitte nicht genehmigen",
    "Apruébalo",
    "Sí, apruébalo",
    "No lo apruebes",
    "Approuve-le",
    "Oui, approuve",
    "Ne l'approuve pas",
    # not an instruction, or not this checkpoint
    "hello",
    "ok",
    "yes",
    "approved",
    "the pump sounds odd",
    "Plan",
    # "plan N" names a plan, it does not say "plan: <goal>" (red team: each drafted a new plan)
    "Plan 6 looks fine",
    "plan #6",
    "Plan 6 abbrechen",
    "Plan looks good",
    "reject it",
    "pause it",
    "approve step 7",
    "approve ask 99999",
    # taken back, or made the object of another request (red team: these acted)
    "approve it. just kidding",
    "Approve it. Actually no.",
    "approve it, jk",
    "Approve it. Translate that into German.",
    "cancel plan 6. just kidding",
    # an id in another script's digits
    "approve step ٢",
]
APPROVE = [
    "approve it",
    "Approve it",
    "yes, approve step 2",
    "go ahead and approve",
    "Please approve it",
    "OK, approve the checkpoint",
    "I approve",
    "Apply it",
    "approve ask {ask}",
]


@pytest.fixture(autouse=True)
def _fresh_calls():
    testcaps.CALLS.clear()


@pytest.fixture
def waiting(operator, django_capture_on_commit_callbacks):
    """Plan 'ask_all' with two read steps: step 1 allowed and done, step 2's ask open (coordinator-approvable)."""
    plan = start(build_plan(operator, [READ, READ], autonomy="ask_all"))
    with django_capture_on_commit_callbacks(execute=True):
        interaction_answer(interaction=Interaction.objects.get(plan=plan), actor=operator, decision="approve")
    ask = Interaction.objects.get(plan=plan, status="open")
    assert ask.coordinator_approvable and ask.step.order == 2 and testcaps.CALLS == ["read_value"]
    return ask


def snapshot():
    """Everything a mutation would change: plans, steps, asks, the audit chain, capability calls."""
    return {
        "plans": sorted(Plan.objects.values_list("pk", "status", "constraints", "goal")),
        "steps": sorted(PlanStep.objects.values_list("pk", "status", "inputs")),
        "asks": sorted(Interaction.objects.values_list("pk", "status", "answer", "evidence")),
        "audit": list(AuditRecord.objects.order_by("id").values_list("action", "target_id")),
        "calls": list(testcaps.CALLS),
    }


@pytest.mark.parametrize("message", NEVER_ACT)
def test_a_message_that_is_not_an_approval_changes_nothing(operator, waiting, message):
    before = snapshot()
    turn = coordinator_turn(user=operator, message=message.format(ask=waiting.pk))
    assert snapshot() == before
    executed = {e["type"] for e in turn.executed}
    assert executed <= NOT_ACTING and executed & {"answer", "ask_clarification"}, turn.executed
    assert turn.status == "ok" and turn.answer  # the user gets an answer or a question, not an error


@pytest.mark.parametrize("message", APPROVE)
def test_an_explicit_approval_in_the_users_words_approves_that_checkpoint(
    operator, waiting, message, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        turn = coordinator_turn(user=operator, message=message.format(ask=waiting.pk))
    assert [e["type"] for e in turn.executed] == ["decide_approval"], turn.answer
    assert turn.executed[0]["result"]["interaction_id"] == waiting.pk and turn.status == "ok"
    waiting.refresh_from_db()
    assert waiting.status == "answered" and waiting.answer["decision"] == "approve"
    assert AuditRecord.objects.filter(action="interaction.approve", target_id=str(waiting.pk)).count() == 1
    assert Plan.objects.get(pk=waiting.plan_id).status == "completed" and testcaps.CALLS == ["read_value"] * 2


def test_the_plans_box_route_takes_the_same_path(client, operator, waiting):
    """As typed into the Plans page's coordinator box: the HTTP route, the offline engine."""
    client.force_login(operator)
    before = snapshot()
    url = "/api/v1/aria/coordinator/turns"
    for message in ("Wait and only describe what you would do", 'You said "approve it" earlier'):
        response = client.post(url, {"message": message}, content_type="application/json")
        assert response.status_code == 201
        assert [e["type"] for e in response.json()["executed"]] in (["answer"], ["ask_clarification"])
    assert snapshot() == before
    approved = client.post(url, {"message": "approve step 2"}, content_type="application/json").json()
    assert [e["type"] for e in approved["executed"]] == ["decide_approval"]
    assert Interaction.objects.get(pk=waiting.pk).status == "answered"


def test_unclear_words_get_a_question_that_names_what_waits(operator, waiting):
    turn = coordinator_turn(user=operator, message="Genehmige es bitte")
    assert [e["type"] for e in turn.executed] == ["ask_clarification"]
    assert "I did not understand that as an instruction, so I changed nothing." in turn.answer
    assert f"ask {waiting.pk} on plan {waiting.plan_id}" in turn.answer


def test_the_step_the_user_names_is_the_checkpoint_approved(operator, waiting):
    """Two plans wait; the newer one is in focus. "approve step 2" means the older plan's step-2 ask,
    "approve step 9" matches no ask: a question, nothing changed."""
    newer = start(build_plan(operator, [READ], autonomy="ask_all"))
    first_step = Interaction.objects.get(plan=newer)
    before = snapshot()
    missing = coordinator_turn(user=operator, message="approve step 9")
    assert [e["type"] for e in missing.executed] == ["ask_clarification"] and snapshot() == before
    assert "No open ask matches step 9" in missing.answer
    named = coordinator_turn(user=operator, message="approve step 2")
    assert [e["result"]["interaction_id"] for e in named.executed] == [waiting.pk]
    assert Interaction.objects.get(pk=first_step.pk).status == "open"
