"""A plan that ends (cancelled, failed, completed) closes its open asks with it, in the same transaction.

The walkthrough's defect: a cancelled plan's gated ask stayed `open` and its step `waiting_interaction`;
the coordinator listed it as waiting and, on "approve ask N", asked the approvers again (a new
`interaction.approval_requested` audit row and a new `interaction_needed` after the
`interaction_closed`). Real paths only: the heuristic planner, the API, the executor, the offline
coordinator through the `say` helper.
"""

from __future__ import annotations

from importlib import import_module

import pytest
from django.apps import apps as django_apps

from core.access import APPROVER, OPERATOR
from core.errors import Conflict
from core.models import AuditRecord, Event
from orchestrator.choices import InteractionStatus, PlanStatus, StepStatus
from orchestrator.models import Interaction, Plan, PlanStep
from orchestrator.services.interactions import interaction_request_approval
from orchestrator.services.plans import plan_transition
from tests.orchestrator.conftest import build_plan, say, start
from tests.orchestrator.test_gated_limits import p02  # noqa: F401 - the P-02 pump fixture

pytestmark = pytest.mark.django_db
API = "/api/v1/aria"
GOAL = "Raise the P-02 vibration alert limit to 4.9 mm/s because the new bearing runs warmer"


def _waiting_on_an_approver(client, owner, capture) -> Interaction:
    """The walkthrough: plan the gated change through the API, approve and execute it; its ask opens."""
    client.force_login(owner)
    created = client.post(f"{API}/plans", {"goal": GOAL}, content_type="application/json")
    assert created.status_code == 201, created.content
    plan_id = created.json()["id"]
    assert client.post(f"{API}/plans/{plan_id}/approve").status_code == 200
    with capture(execute=True):
        assert client.post(f"{API}/plans/{plan_id}/execute").status_code == 202
    ask = Interaction.objects.get(plan_id=plan_id)
    assert ask.status == InteractionStatus.OPEN and ask.step.status == StepStatus.WAITING_INTERACTION
    return ask


def _trail(ask: Interaction) -> tuple[list[tuple[str, str | None]], int]:
    """This ask's events (type, because) in order, and its approval_requested audit rows."""
    events = [
        (e.type, e.payload.get("because"))
        for e in Event.objects.filter(payload__interaction_id=ask.pk).order_by("id")
        if e.type in ("interaction_needed", "interaction_closed")
    ]
    requested = AuditRecord.objects.filter(action="interaction.approval_requested", target_id=str(ask.pk)).count()
    return events, requested


@pytest.mark.usefixtures("p02")
def test_a_cancelled_plans_ask_is_closed_and_the_coordinator_never_asks_for_it_again(
    client, make_user, django_capture_on_commit_callbacks
):
    owner, approver = make_user("owen", OPERATOR), make_user("ava", APPROVER)
    ask = _waiting_on_an_approver(client, owner, django_capture_on_commit_callbacks)
    opened, _ = _trail(ask)

    cancelled = client.patch(f"{API}/plans/{ask.plan_id}", {"status": "cancelled"}, content_type="application/json")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == PlanStatus.CANCELLED

    # the ask is closed with its plan, and its step no longer waits
    listed = client.get(f"{API}/plans/{ask.plan_id}/interactions").json()
    assert [(i["id"], i["status"]) for i in listed] == [(ask.pk, InteractionStatus.CLOSED)]
    assert listed[0]["answered_by"] is None and "cancelled" in listed[0]["answer"]["reason"]
    step = PlanStep.objects.get(pk=ask.step_id)
    assert step.status == StepStatus.STOPPED and f"plan {ask.plan_id} was cancelled by owen" in step.error
    # interaction_closed once to the same deciders as the interaction_needed; nothing asked again
    closed = Event.objects.filter(type="interaction_closed", payload__interaction_id=ask.pk)
    needed = Event.objects.filter(type="interaction_needed", payload__interaction_id=ask.pk)
    assert sorted(e.payload["owner_id"] for e in closed) == sorted(e.payload["owner_id"] for e in needed)
    assert sorted(e.payload["owner_id"] for e in closed) == sorted([owner.pk, approver.pk])
    after_cancel = _trail(ask)
    assert after_cancel == (opened + [("interaction_closed", "plan_finished")] * 2, 0)

    # the coordinator lists nothing waiting, and "approve ask N" requests nothing
    turn = say(client, owner, "blah")
    assert f"ask {ask.pk}" not in turn.answer and "Waiting:" not in turn.answer, turn.answer
    turn = say(client, owner, f"approve ask {ask.pk}")
    assert "Asked the approvers" not in turn.answer, turn.answer
    assert f"No open ask matches ask {ask.pk}; open asks: none." in turn.answer
    assert [e["type"] for e in turn.executed] == ["ask_clarification"], turn.executed
    assert _trail(ask) == after_cancel
    ask.refresh_from_db()
    assert ask.status == InteractionStatus.CLOSED and "approval_requested_by" not in ask.evidence

    # directly: a 409 naming the plan, and nothing written
    with pytest.raises(Conflict) as refused:
        interaction_request_approval(interaction=ask, actor=owner)
    assert refused.value.message == f"Plan {ask.plan_id} is cancelled; its asks are closed."
    client.force_login(approver)
    answered = client.post(
        f"{API}/interactions/{ask.pk}/answer", {"decision": "approve"}, content_type="application/json"
    )
    assert answered.status_code == 409, answered.content
    assert answered.json()["detail"] == f"Plan {ask.plan_id} is cancelled; its asks are closed."
    assert client.get(f"{API}/needs-me").json()["count"] == 0
    assert _trail(ask) == after_cancel
    assert Interaction.objects.get(pk=ask.pk).status == InteractionStatus.CLOSED


@pytest.mark.parametrize("ending", [PlanStatus.FAILED, PlanStatus.CANCELLED])
def test_every_ask_of_an_ending_plan_closes_and_its_waiting_steps_stop(make_user, ending):
    """Two steps each waiting on its own ask (ask_all): the executor failing the plan, or the owner
    cancelling it, closes both; a step not yet reached stays as it was."""
    owner = make_user("oscar", OPERATOR)
    plan = start(
        build_plan(
            owner,
            [
                {"capability": "otest.read_value", "inputs": {"key": "a"}},
                {"capability": "otest.read_value", "inputs": {"key": "b"}},
                {"capability": "otest.read_value", "inputs": {"key": "c"}, "depends_on": [1]},
            ],
            autonomy="ask_all",
        )
    )
    asks = list(Interaction.objects.filter(plan=plan).order_by("pk"))
    assert len(asks) == 1  # the executor asks one at a time; open the second the same way
    from orchestrator.services.interactions import ask_permission

    ask_permission(plan, plan.steps.get(order=2))
    assert Interaction.objects.filter(plan=plan, status=InteractionStatus.OPEN).count() == 2

    actor = owner if ending == PlanStatus.CANCELLED else None
    plan_transition(plan=plan, to_status=ending, actor=actor, reason="")

    assert sorted(Interaction.objects.filter(plan=plan).values_list("status", flat=True)) == ["closed", "closed"]
    assert [s.status for s in plan.steps.order_by("order")] == ["stopped", "stopped", "pending"]
    assert Event.objects.filter(type="interaction_closed", payload__plan_id=plan.pk).count() == 2
    assert not AuditRecord.objects.filter(action__startswith="interaction.")


def test_the_data_migration_closes_asks_left_open_on_finished_plans(make_user):
    """Asks the old code left open on a finished plan (and their waiting steps) are closed; an ask on
    a plan still paused is left to its deciders."""
    owner = make_user("oscar", OPERATOR)
    steps = [{"capability": "otest.read_value", "inputs": {"key": "a"}}]
    left, live = (start(build_plan(owner, steps, autonomy="ask_all")) for _ in range(2))
    Plan.objects.filter(pk=left.pk).update(status=PlanStatus.CANCELLED)  # as the old cancel left it
    migration = import_module("orchestrator.migrations.0007_interaction_closed")
    migration.close_finished_asks(django_apps, None)

    assert Interaction.objects.get(plan=left).status == InteractionStatus.CLOSED
    assert left.steps.get().status == StepStatus.STOPPED
    assert Interaction.objects.get(plan=live).status == InteractionStatus.OPEN
    assert live.steps.get().status == StepStatus.WAITING_INTERACTION


# A late job result below its gate on a cancelled plan opens no ask at all (it is refused and recorded
# as ignored): tests/orchestrator/test_late_job_results.py.


@pytest.mark.parametrize("kind", ["request_approval", "present_approval"])
def test_a_model_naming_a_closed_ask_is_refused_with_the_reason(make_user, kind):
    """A model (not the offline reader) that names the cancelled plan's ask anyway: refused at
    validation, saying why, and nothing is written."""
    from orchestrator.coordinator.service import coordinator_turn
    from tests.orchestrator.test_coordinator import scripted

    owner = make_user("oscar", OPERATOR)
    make_user("ava", APPROVER)
    plan = start(build_plan(owner, [{"capability": "otest.release", "inputs": {"label": "x"}}]))
    ask = Interaction.objects.get(plan=plan)
    plan_transition(plan=plan, to_status=PlanStatus.CANCELLED, actor=owner)
    before = _trail(ask)

    turn = coordinator_turn(
        user=owner, message="Apply it", engine=scripted({"type": kind, "interaction_id": ask.pk, "text": "please"})
    )

    assert turn.status == "rejected" and turn.executed == []
    assert f"interaction {ask.pk} is closed: plan {plan.pk} is cancelled" in turn.answer, turn.answer
    assert _trail(ask) == before and "approval_requested_by" not in Interaction.objects.get(pk=ask.pk).evidence
