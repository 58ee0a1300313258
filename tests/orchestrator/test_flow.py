"""The whole story in-process: gated approval (separation of duties) → investigation parks → resumes."""

import pytest

from core.access import APPROVER, OPERATOR
from core.audit import audit_verify
from core.errors import Forbidden
from core.models import AuditRecord, Event
from orchestrator.choices import PlanStatus, StepStatus
from orchestrator.models import Interaction
from orchestrator.services.executor import plan_start
from orchestrator.services.interactions import interaction_answer
from orchestrator.services.jobs import plan_poll
from orchestrator.services.plans import plan_approve
from tests.orchestrator.conftest import build_plan
from tests.workorders import factories as f
from workorders.models import WorkOrder

pytestmark = pytest.mark.django_db


@pytest.fixture
def detected_order(db):
    cell = f.make_cell("P-02")
    vibration = f.make_signal(cell)
    f.make_signal(cell, "bearing_temp_c", display_name="Bearing temperature", unit="°C", alert=80.0, trip=95.0)
    f.ramp(vibration)
    f.make_kb(cell)
    f.make_history(cell)
    alarm = f.make_alarm(vibration, value=5.0)
    return f.make_work_order(cell, triggered_by_alarm=alarm, status="detected")


def flow_steps(wo_id: int) -> list[dict]:
    return [
        {"capability": "workorders.get_work_order", "inputs": {"work_order_id": wo_id}},
        {"capability": "otest.release", "inputs": {"label": f"wo-{wo_id}"}, "depends_on": [1]},
        {"capability": "workorders.start_investigation", "inputs": {"work_order_id": wo_id}, "depends_on": [2]},
        {"capability": "workorders.get_work_order", "inputs": {"work_order_id": wo_id}, "depends_on": [3]},
    ]


def test_gated_plan_parks_on_a_real_investigation_and_completes(
    make_user, detected_order, django_capture_on_commit_callbacks
):
    owner = make_user("owen", OPERATOR)
    approver = make_user("ava", APPROVER)
    wo = detected_order
    plan = build_plan(owner, flow_steps(wo.pk), autonomy="auto", status="draft")
    plan_approve(plan=plan, actor=owner)

    # Given an approved plan, when it runs, it pauses on the gated step
    with django_capture_on_commit_callbacks(execute=True):
        plan_start(plan=plan, actor=owner)
    plan.refresh_from_db()
    assert plan.status == PlanStatus.PAUSED
    ask = Interaction.objects.get(plan=plan, status="open")
    assert ask.required_scope == APPROVER and ask.step.capability == "otest.release"

    # the owner may not approve it
    with pytest.raises(Forbidden):
        interaction_answer(interaction=ask, actor=owner, decision="approve")

    # another approver does; the plan runs and parks on the investigation (not yet run)
    with django_capture_on_commit_callbacks(execute=False) as answered:
        interaction_answer(interaction=ask, actor=approver, decision="approve")
    with django_capture_on_commit_callbacks(execute=False) as executed:
        for callback in answered:
            callback()
    plan.refresh_from_db()
    steps = list(plan.steps.all())
    assert plan.status == PlanStatus.RUNNING
    assert [s.status for s in steps] == ["done", "done", "waiting_job", "pending"]
    assert (steps[2].job_kind, steps[2].job_ref) == ("investigation", str(wo.pk))
    assert WorkOrder.objects.get(pk=wo.pk).status == "detected"

    # polling while the work order is still detected changes nothing
    with django_capture_on_commit_callbacks(execute=True):
        plan_poll(plan.pk)
    assert plan.steps.get(order=3).status == StepStatus.WAITING_JOB

    # the investigation runs (the worker picks up the task start_investigation enqueued)
    with django_capture_on_commit_callbacks(execute=True):
        for callback in executed:
            callback()
    assert WorkOrder.objects.get(pk=wo.pk).status in ("analyzed", "open")

    # the next poll resumes the plan, which completes
    with django_capture_on_commit_callbacks(execute=True):
        plan_poll(plan.pk)
    plan.refresh_from_db()
    assert plan.status == PlanStatus.COMPLETED
    investigation = plan.steps.get(order=3)
    assert investigation.result["rca_summary"] and investigation.result["confidence"] > 0
    assert plan.steps.get(order=4).result["id"] == wo.pk

    statuses = [
        e.payload["status"] for e in Event.objects.filter(type="plan_updated", payload__plan_id=plan.pk).order_by("id")
    ]
    assert statuses[0] == "approved" and statuses[-1] == "completed" and "paused" in statuses
    actions = set(
        AuditRecord.objects.filter(target_id=str(plan.pk), target_type="plan").values_list("action", flat=True)
    )
    assert {"plan.approved", "plan.running", "plan.paused", "plan.completed"} <= actions
    assert AuditRecord.objects.filter(action="interaction.approve", actor=approver).exists()
    assert audit_verify() is None
