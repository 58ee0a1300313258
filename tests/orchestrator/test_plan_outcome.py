"""A plan whose change was rejected at the gate does not read as one that made it.

Every step closed → the plan completes; before, a plan whose only change step a person rejected
ended a plain "completed", which a maintenance user reads as "the change was made". The move to
completed now carries an outcome (orchestrator.services.plan_outcome) saying which change steps
(mutate, gated) were applied and which not, and who said no: on the plan (API), in the audit row
`plan.completed` and on the `plan_updated` event. A plan that applied every change completes as
before, with no outcome. Rejections go through the route a person uses
(POST /api/v1/aria/interactions/{id}/answer), the plan re-driven by the worker it enqueues."""

from __future__ import annotations

import pytest

from core.models import AuditRecord, Event
from orchestrator.models import Interaction, Plan
from tests.orchestrator import testcaps
from tests.orchestrator.conftest import build_plan, start

pytestmark = pytest.mark.django_db

API = "/api/v1/aria"
WRITE = {"capability": "otest.write_effect", "inputs": {"label": "seal"}}
RELEASE = {"capability": "otest.release", "inputs": {"label": "P-02"}}


@pytest.fixture
def answer(client, django_capture_on_commit_callbacks):
    """Answer the plan's open ask as `user` through the API; the plan walks on (the worker's pass)."""

    def _answer(plan: Plan, user, decision: str) -> None:
        ask = Interaction.objects.get(plan=plan, status="open")
        client.force_login(user)
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                f"{API}/interactions/{ask.pk}/answer", {"decision": decision}, content_type="application/json"
            )
        assert response.status_code == 200, response.content

    return _answer


def _read(client, plan: Plan) -> dict:
    client.force_login(plan.owner)
    response = client.get(f"{API}/plans/{plan.pk}")
    assert response.status_code == 200
    return response.json()


def _completed_record(plan: Plan) -> tuple[dict, dict]:
    audit = AuditRecord.objects.get(action="plan.completed", target_id=str(plan.pk))
    event = Event.objects.filter(type="plan_updated", payload__plan_id=plan.pk, payload__status="completed").latest(
        "id"
    )
    return audit.details, event.payload


def test_a_plan_whose_only_change_was_rejected_at_the_gate_says_nothing_was_applied(client, operator, approver, answer):
    plan = start(build_plan(operator, [RELEASE]))

    answer(plan, approver, "reject")

    body = _read(client, plan)
    said = "Nothing applied — step 1 (otest.release): rejected by april."
    assert body["status"] == "completed" and body["outcome"] == said
    assert body["steps"][0]["status"] == "skipped" and body["steps"][0]["error"] == "Rejected by april"
    assert testcaps.CALLS == []  # the release never ran
    audit, event = _completed_record(plan)
    assert audit["outcome"] == said and audit["to"] == "completed"
    assert event["outcome"] == said and event["owner_id"] == operator.pk


def test_one_change_applied_and_one_rejected_says_which(client, operator, approver, answer):
    plan = start(build_plan(operator, [WRITE, RELEASE]))  # auto: the mutation runs, the gated release asks
    assert testcaps.effect_count("seal") == 1

    answer(plan, approver, "reject")

    said = "Applied: step 1 (otest.write_effect). Not applied — step 2 (otest.release): rejected by april."
    assert _read(client, plan)["outcome"] == said
    audit, event = _completed_record(plan)
    assert audit["outcome"] == event["outcome"] == said


def test_the_owner_rejecting_their_own_mutation_ask_is_said_too(client, operator, answer):
    plan = start(build_plan(operator, [WRITE], autonomy="ask_mutations"))

    answer(plan, operator, "no")

    assert _read(client, plan)["outcome"] == "Nothing applied — step 1 (otest.write_effect): rejected by olga."
    assert testcaps.effect_count("seal") == 0


def test_every_change_applied_completes_as_before(client, operator, approver, answer):
    plan = start(build_plan(operator, [WRITE, RELEASE]))

    answer(plan, approver, "approve")

    body = _read(client, plan)
    assert body["status"] == "completed" and body["outcome"] == ""
    assert testcaps.CALLS == ["write_effect", "release"]
    audit, event = _completed_record(plan)
    assert "outcome" not in audit and event["outcome"] == ""


def test_a_rejected_read_changes_nothing_and_completes_without_an_outcome(client, operator, answer):
    plan = start(build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], autonomy="ask_all"))

    answer(plan, operator, "reject")

    body = _read(client, plan)
    assert body["status"] == "completed" and body["outcome"] == ""  # nothing was to change


def test_a_change_skipped_by_its_owner_is_named_with_who_skipped_it(
    client, operator, django_capture_on_commit_callbacks
):
    plan = start(build_plan(operator, [WRITE, RELEASE]))  # the release waits for an approver
    client.force_login(operator)
    with django_capture_on_commit_callbacks(execute=True):  # the skip withdraws the ask; the plan walks on
        skipped = client.post(
            f"{API}/plans/{plan.pk}/steps/2/skip", {"reason": "parts late"}, content_type="application/json"
        )
    assert skipped.status_code == 200, skipped.content

    body = _read(client, plan)
    assert body["status"] == "completed"
    assert body["outcome"] == (
        "Applied: step 1 (otest.write_effect). Not applied — step 2 (otest.release): skipped by olga: parts late."
    )


def test_a_change_that_ran_but_whose_result_was_refused_is_never_called_not_applied(client, operator, answer):
    gated_result = {**WRITE, "quality_gate": {"field": "effect_id", "op": "lt", "threshold": 0}}
    plan = start(build_plan(operator, [gated_result]))
    assert testcaps.effect_count("seal") == 1  # it ran: its effect is made

    answer(plan, operator, "reject")

    outcome = _read(client, plan)["outcome"]
    assert outcome.startswith("Started, then not kept — step 1 (otest.write_effect): ")
    assert "rejected by olga" in outcome and "Nothing applied" not in outcome
