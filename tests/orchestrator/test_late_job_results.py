"""A job result that lands after its plan ended is refused: recorded as ignored, never settled.

The defect: a plan cancelled while a step waited on its job still took the job's result when it
was polled (the Plans page's Poll, the beat, the job-deadline reaper): the step became `done` with
the result (or `failed`), and a result below the step's quality gate opened a confirm ask already
`closed`. Now the step stays as the cancel left it, no ask is opened, and one audit row
(`plan.job_result_ignored`) says why, however often the result is delivered.
"""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections, transaction

from core.models import AuditRecord
from orchestrator.choices import PlanStatus, StepStatus
from orchestrator.models import Interaction, Plan, PlanStep
from orchestrator.services.jobs import step_settle_job
from orchestrator.services.plans import plan_cancel, plan_transition
from tests.orchestrator import testcaps
from tests.orchestrator.conftest import build_plan, start

API = "/api/v1/aria"
GATE = {"field": "confidence", "op": "gte", "threshold": 0.7}


def parked(owner, ref: str, *, gate: dict | None = None) -> Plan:
    plan = start(build_plan(owner, [{"capability": "otest.start_job", "inputs": {"ref": ref}, "quality_gate": gate}]))
    assert plan.steps.get().status == StepStatus.WAITING_JOB
    return plan


def ignored(plan: Plan) -> list[AuditRecord]:
    return list(AuditRecord.objects.filter(action="plan.job_result_ignored", details__plan_id=plan.pk))


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("finish", "gate"),
    [
        ({"confidence": 0.4}, GATE),  # below the gate: would open a confirm ask
        ({"confidence": 0.9}, None),  # a plain result: would settle the step done
        ({"state": "failed", "error": "agent crashed"}, None),  # a failure: would fail the step
    ],
)
def test_a_cancelled_plans_late_job_result_is_refused_over_the_api(
    client, operator, django_capture_on_commit_callbacks, finish, gate
):
    plan = parked(operator, "late", gate=gate)
    client.force_login(operator)
    res = client.patch(f"{API}/plans/{plan.pk}", {"status": "cancelled"}, content_type="application/json")
    assert res.status_code == 200 and res.json()["status"] == PlanStatus.CANCELLED
    testcaps.finish_job("late", **finish)

    for _ in range(2):  # delivered twice: the same single record
        with django_capture_on_commit_callbacks(execute=True):
            polled = client.post(f"{API}/plans/{plan.pk}/poll")
        assert polled.status_code == 200, polled.content
        assert polled.json()["status"] == PlanStatus.CANCELLED
        step = PlanStep.objects.get(plan=plan)
        assert step.status == StepStatus.WAITING_JOB and step.error == ""
        assert "confidence" not in (step.result or {}) and "error" not in (step.result or {})
        assert not Interaction.objects.filter(plan=plan).exists()
        [record] = ignored(plan)
    assert record.target_type == "plan_step" and record.target_id == str(step.pk)
    assert record.details["job"] == "otest_job late"
    assert record.details["state"] == finish.get("state", "done")
    assert record.details["reason"] == f"plan {plan.pk} is cancelled; a job result after it ended is not recorded"
    assert Plan.objects.get(pk=plan.pk).status == PlanStatus.CANCELLED


@pytest.mark.django_db
def test_the_deadline_reaper_cannot_fail_a_step_of_a_finished_plan(operator):
    plan = parked(operator, "gone")
    plan_transition(plan=plan, to_status=PlanStatus.CANCELLED, actor=operator)
    step = PlanStep.objects.get(plan=plan)
    assert step_settle_job(plan, step, "failed", {"error": "made no progress"}) is False
    assert PlanStep.objects.get(pk=step.pk).status == StepStatus.WAITING_JOB
    assert len(ignored(plan)) == 1


@pytest.mark.django_db
def test_a_running_plans_job_result_still_settles(operator, django_capture_on_commit_callbacks):
    plan = parked(operator, "ok", gate=GATE)
    testcaps.finish_job("ok", confidence=0.4)
    step = PlanStep.objects.get(plan=plan)
    with django_capture_on_commit_callbacks(execute=True):
        assert step_settle_job(plan, step, "done", {"confidence": 0.4}) is True
    assert PlanStep.objects.get(pk=step.pk).status == StepStatus.WAITING_INTERACTION
    assert Interaction.objects.get(plan=plan).status == "open" and not ignored(plan)


# --- PostgreSQL: the cancel racing the result ----------------------------------------------------


def _blocked_on_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return bool(row) and row[0] == "Lock"


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_result_racing_the_cancel_is_refused_when_the_cancel_commits_first(operator):
    """The cancel holds the plan row, uncommitted, when the job result arrives on another connection:
    the result waits for it, then sees the plan cancelled and is refused (without the plan lock, it
    settled the step under the cancel's feet)."""
    assert connection.vendor == "postgresql"
    plan = parked(operator, "race", gate=GATE)
    testcaps.finish_job("race", confidence=0.4)
    outcome: dict = {}
    result_pid: list[int] = []

    def deliver() -> None:
        try:
            conn = connections["default"]
            conn.ensure_connection()
            with conn.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                result_pid.append(cursor.fetchone()[0])
            step = PlanStep.objects.get(plan_id=plan.pk)
            outcome["settled"] = step_settle_job(Plan.objects.get(pk=plan.pk), step, "done", {"confidence": 0.4})
        finally:
            connections.close_all()

    worker = threading.Thread(target=deliver)
    with transaction.atomic():
        plan_cancel(plan=Plan.objects.get(pk=plan.pk), actor=operator)  # the plan row is locked until commit
        worker.start()
        for _ in range(2000):  # until the result waits on the cancel's lock, or (without it) is done
            if not worker.is_alive() or (result_pid and _blocked_on_a_lock(result_pid[0])):
                break
            worker.join(0.01)
    worker.join(30)
    assert not worker.is_alive()
    assert outcome == {"settled": False}
    step = PlanStep.objects.get(plan_id=plan.pk)
    assert step.status == StepStatus.WAITING_JOB and "confidence" not in (step.result or {})
    assert not Interaction.objects.filter(plan_id=plan.pk).exists()
    assert len(ignored(plan)) == 1
