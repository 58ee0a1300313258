"""The approval path end to end: an operator plans a limit change, a DIFFERENT approver releases it.

Real components only: the heuristic planner, the executor, interactions, the sentinel capability
and its evaluation. The P-02 pump is built with the workorders test factories (demo-like limits).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core.access import APPROVER, OPERATOR
from core.audit import audit_verify
from core.errors import Forbidden
from core.models import AuditRecord, Event
from orchestrator.choices import PlanStatus, StepStatus
from orchestrator.models import Interaction, Plan, PlanStep
from orchestrator.planning.heuristic import HeuristicPlanner
from orchestrator.services.executor import plan_execute
from orchestrator.services.interactions import interaction_answer
from orchestrator.services.plans import plan_approve, plan_create
from sentinel.models import Alarm, SignalDefinition, SignalLatest
from sentinel.services.evaluation import signals_evaluate
from sentinel.services.limits import signal_limits_change
from tests.workorders import factories as f

pytestmark = pytest.mark.django_db
API = "/api/v1/aria"
GOAL = "Raise the P-02 vibration alert limit to 4.8 mm/s because the new bearing runs warmer"
CHANGE = "sentinel.change_signal_limits"


@pytest.fixture
def p02(db):
    """P-02 with the demo's signals; vibration's alert alarm raised at 4.7, the value now 4.55."""
    cell = f.make_cell("P-02")
    vibration = f.make_signal(cell)
    f.make_signal(cell, "bearing_temp_c", display_name="Bearing temperature", unit="°C", alert=80.0, trip=95.0)
    for key, low, alert in (("discharge_pressure_bar", 3.0, 9.0), ("suction_pressure_bar", 0.8, None)):
        f.make_signal(cell, key, display_name=key, unit="bar", low_alert=low, alert=alert, trip=None, deadband=0.1)
    SignalLatest.objects.create(signal=vibration, time=timezone.now(), value=4.7)
    signals_evaluate(signal_ids=[vibration.pk])
    SignalLatest.objects.filter(signal=vibration).update(value=4.55, time=timezone.now())
    return vibration


def answer(client, user, interaction, decision="approve"):
    client.force_login(user)
    return client.post(
        f"{API}/interactions/{interaction.pk}/answer", {"decision": decision}, content_type="application/json"
    )


def test_operator_plans_it_and_only_another_human_with_the_approver_scope_releases_it(
    client, make_user, p02, django_capture_on_commit_callbacks
):
    owner, other = make_user("owen", OPERATOR), make_user("otto", OPERATOR)
    approver = make_user("ava", APPROVER)  # like the demo's approver: no operator scope
    [alarm] = Alarm.objects.filter(signal=p02, state="active_unack")

    # The operator creates the plan from the goal: a read, then the gated change with its inputs
    client.force_login(owner)
    created = client.post(f"{API}/plans", {"goal": GOAL}, content_type="application/json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert [(s["capability"], s["tier"], s["depends_on"]) for s in body["steps"]] == [
        ("workorders.get_current_signals", "read", []),
        (CHANGE, "gated", [1]),
    ]
    change_inputs = body["steps"][1]["inputs"]
    assert {k: v for k, v in change_inputs.items() if v is not None} == {
        "cell_tag": "P-02",
        "signal_key": "vibration_mm_s",
        "alert": 4.8,
        "reason": "The new bearing runs warmer",
    }
    assert any(n["capability"] == CHANGE and "alert: 4.5 → 4.8" in n["reason"] for n in body["planner_notes"])

    # approves and executes it: the read runs, the gated step waits for an approver
    plan_id = body["id"]
    assert client.post(f"{API}/plans/{plan_id}/approve").status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(f"{API}/plans/{plan_id}/execute").status_code == 202
    plan = Plan.objects.get(pk=plan_id)
    assert plan.status == PlanStatus.PAUSED
    assert [s.status for s in plan.steps.order_by("order")] == ["done", "waiting_interaction"]
    ask = Interaction.objects.get(plan=plan, status="open")
    assert ask.required_scope == APPROVER and ask.step.capability == CHANGE
    assert SignalDefinition.objects.get(pk=p02.pk).alert == 4.5

    # the owner may not release their own change
    refused = answer(client, owner, ask)
    assert refused.status_code == 403 and refused.json()["code"] == "separation_of_duties"
    # another operator without the approver scope neither sees nor may answer it
    assert answer(client, other, ask).status_code == 404
    with pytest.raises(Forbidden) as missing:
        interaction_answer(interaction=ask, actor=other, decision="approve")
    assert missing.value.code == "missing_scope"
    assert SignalDefinition.objects.get(pk=p02.pk).alert == 4.5

    # the approver sees it on the Needs-you badge and approves it: the change runs and the plan completes
    client.force_login(approver)
    needs = client.get(f"{API}/needs-me").json()
    assert needs["count"] == 1 and needs["interactions"][0]["id"] == ask.pk
    with django_capture_on_commit_callbacks(execute=True):
        approved = answer(client, approver, ask)
    assert approved.status_code == 200 and approved.json()["answered_by"] == "ava"
    plan.refresh_from_db()
    assert plan.status == PlanStatus.COMPLETED, plan.error
    step = plan.steps.get(order=2)
    assert step.status == StepStatus.DONE and step.result["changed"] == ["alert"]
    assert step.result["alarms"]["cleared"] == [alarm.pk]  # 4.55 is inside 4.8 - 0.2 now

    signal = SignalDefinition.objects.get(pk=p02.pk)
    assert (signal.alert, signal.trip) == (4.8, 7.1)
    assert Alarm.objects.get(pk=alarm.pk).state == "cleared"
    # The sentinel audit names the requester, who released it, the change and its plan step
    change = AuditRecord.objects.get(action="signal.limits_change", target_id=str(p02.pk))
    assert change.actor == owner and change.details["reason"] == "The new bearing runs warmer"
    assert change.details["approved_by"] == approver.username
    assert (change.details["before"]["alert"], change.details["after"]["alert"]) == (4.5, 4.8)
    assert (change.details["plan_id"], change.details["step_id"]) == (plan.pk, step.pk)
    approval = AuditRecord.objects.get(action="interaction.approve", target_id=str(ask.pk))
    assert approval.actor == approver and approval.details["step_id"] == change.details["step_id"]
    assert Event.objects.filter(type="signal_limits_changed", payload__signal_def_id=p02.pk).count() == 1
    assert audit_verify() is None


def test_a_step_retried_after_a_dead_worker_does_not_apply_twice(make_user, p02, django_capture_on_commit_callbacks):
    owner, approver = make_user("owen", OPERATOR), make_user("ava", APPROVER)
    plan = plan_create(owner=owner, goal=GOAL, autonomy="auto")
    plan_approve(plan=plan, actor=owner)
    with django_capture_on_commit_callbacks(execute=True):
        from orchestrator.services.executor import plan_start

        plan_start(plan=plan, actor=owner)
    with django_capture_on_commit_callbacks(execute=False):  # approved; the executor has not run yet
        interaction_answer(interaction=Interaction.objects.get(plan=plan), actor=approver, decision="approve")

    # Given a worker that claimed the step, applied the change, and died before writing the outcome
    step = plan.steps.get(capability=CHANGE)
    key = f"plan{plan.pk}-step{step.pk}-dead"
    PlanStep.objects.filter(pk=step.pk).update(
        status=StepStatus.RUNNING, idempotency_key=key, claimed_at=timezone.now() - timedelta(hours=1)
    )
    signal_limits_change(signal=p02, changes={"alert": 4.8}, reason="dead worker", actor=owner, idempotency_key=key)

    # When the next pass takes the stale step over with the same key
    plan = plan_execute(plan.pk, stale_after=timedelta(seconds=1))

    # Then the step completes from the first application; nothing is applied twice
    step.refresh_from_db()
    assert plan.status == PlanStatus.COMPLETED and step.status == StepStatus.DONE
    assert step.result["replayed"] is True and step.result["changed"] == ["alert"]
    assert AuditRecord.objects.filter(action="signal.limits_change").count() == 1


@pytest.mark.parametrize(
    ("goal", "signal_key", "field", "value"),
    [
        ("Set the P-02 vibration trip to 7.5 because the OEM says so", "vibration_mm_s", "trip", 7.5),
        ("Raise the P-02 bearing temperature high alert to 85 °C because summer", "bearing_temp_c", "high_alert", 85),
        ("Lower the P-02 suction pressure low alert to 0.5 bar", "suction_pressure_bar", "low_alert", 0.5),
        ("Change the P-02 vibration deadband to 0.3 because it chatters", "vibration_mm_s", "deadband", 0.3),
        ("Set the P-02 vibration on-delay to 10 s because spikes", "vibration_mm_s", "on_delay_seconds", 10),
    ],
)
def test_the_planner_maps_words_to_the_signal_and_the_field(make_user, p02, goal, signal_key, field, value):
    proposal = HeuristicPlanner().propose(goal=goal, context_refs=[], constraints={}, user=make_user("o", OPERATOR))
    change = next(s for s in proposal.steps if s["capability"] == CHANGE)
    assert change["inputs"]["signal_key"] == signal_key and change["inputs"][field] == value
    assert proposal.steps[change["depends_on"][0]]["capability"] == "workorders.get_current_signals"
    assert change["inputs"]["reason"]


@pytest.mark.parametrize(
    ("goal", "why"),
    [
        ("Raise the P-02 vibration alert limit because it runs warm", "no new value"),
        ("Raise the P-02 pressure alert limit to 9.5", "several pressure signals"),
        ("Raise the P-02 flow alert limit to 170", "P-02 has no flow signal"),
        ("Raise the P-02 alert limit to 5", "names no signal"),
        ("Raise the P-02 vibration alert and trip limits to 5", "several limits"),
        ("Raise the X-99 vibration alert limit to 4.8", "no equipment tag in the goal resolved"),
    ],
)
def test_an_unresolved_change_is_dropped_with_its_reason(client, make_user, p02, goal, why):
    client.force_login(make_user("o", OPERATOR))
    response = client.post(f"{API}/plans", {"goal": goal}, content_type="application/json")
    body = response.json()
    if response.status_code == 422:  # nothing else to plan either (X-99 is no cell): refused with the notes
        notes = body["notes"]
    else:
        assert response.status_code == 201, response.content
        assert CHANGE not in [s["capability"] for s in body["steps"]]
        notes = body["planner_notes"]
    dropped = [n for n in notes if n["capability"] == CHANGE]
    assert dropped and dropped[0]["action"] == "dropped" and why in dropped[0]["reason"], dropped


def test_a_goal_that_is_not_a_limit_change_plans_as_before(make_user, p02):
    proposal = HeuristicPlanner().propose(
        goal="Investigate the vibration on P-02", context_refs=[], constraints={}, user=make_user("o", OPERATOR)
    )
    assert CHANGE not in [s["capability"] for s in proposal.steps]
    assert not [n for n in proposal.notes if n["capability"] == CHANGE]


def test_the_approver_approves_what_was_asked_and_cannot_rewrite_it(
    client, make_user, p02, django_capture_on_commit_callbacks
):
    """Red team: an approver answered "approve" with inputs setting the trip to 1e300; the change
    ran attributed to the requester, who never saw it. A gated ask takes no edited inputs."""
    owner, approver = make_user("owen", OPERATOR), make_user("ava", APPROVER)
    plan = plan_create(owner=owner, goal=GOAL, autonomy="auto")
    plan_approve(plan=plan, actor=owner)
    with django_capture_on_commit_callbacks(execute=True):
        from orchestrator.services.executor import plan_start

        plan_start(plan=plan, actor=owner)
    ask = Interaction.objects.get(plan=plan, status="open")
    edited = {**ask.step.inputs, "trip": 1e300}

    client.force_login(approver)
    response = client.post(
        f"{API}/interactions/{ask.pk}/answer",
        {"decision": "approve", "inputs": edited},
        content_type="application/json",
    )
    assert response.status_code == 422 and response.json()["field"] == "inputs"
    assert "reject it with a reason" in response.json()["detail"]
    ask.refresh_from_db()
    assert ask.status == "open" and ask.step.inputs.get("trip") is None
    signal = SignalDefinition.objects.get(pk=p02.pk)
    assert (signal.alert, signal.trip) == (4.5, 7.1)
    assert not AuditRecord.objects.filter(action__in=["interaction.approve", "signal.limits_change"]).exists()
