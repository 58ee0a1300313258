"""Parked steps: ask each job's resolver whether it finished, settle the step, resume the plan."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from core.capabilities import JobHandle, job_status
from orchestrator.choices import PlanStatus, StepStatus
from orchestrator.dispatch import enqueue_execution
from orchestrator.models import Plan, PlanStep
from orchestrator.services.executor import plans_needing_attention, settle_result
from orchestrator.services.plans import plan_updated


def step_settle_job(plan: Plan, step: PlanStep, state: str, details: dict) -> bool:
    """waiting_job → done / confirm ask / failed, guarded in the query (two pollers settle once)."""
    with transaction.atomic():
        # Take the step from waiting_job back to running under its own key, then settle it.
        won = PlanStep.objects.filter(pk=step.pk, status=StepStatus.WAITING_JOB).update(
            status=StepStatus.RUNNING, updated_at=timezone.now()
        )
        if not won:
            return False
        step.status = StepStatus.RUNNING
        result = {**(step.result or {}), **(details or {})}
        if state == "done":
            settle_result(plan, step, result)
        else:
            error = str((details or {}).get("error") or f"{step.job_kind} {step.job_ref} failed")
            PlanStep.objects.filter(pk=step.pk).update(
                status=StepStatus.FAILED, result=result, error=error, updated_at=timezone.now()
            )
            step.status = StepStatus.FAILED
            plan_updated(plan, step)
    return True


def plan_poll(plan_id: int) -> Plan:
    """Poll every parked step of one plan, then let a worker continue it (after commit)."""
    plan = Plan.objects.select_related("owner").get(pk=plan_id)
    settled = False
    for step in plan.steps.filter(status=StepStatus.WAITING_JOB):
        state, details = job_status(JobHandle(step.job_kind, step.job_ref))
        if state in ("done", "failed"):
            settled |= step_settle_job(plan, step, state, details)
    plan.refresh_from_db()
    # Nothing new to walk while every in-flight step still waits on its job (no intent per poll).
    statuses = set(plan.steps.values_list("status", flat=True))
    still_parked = StepStatus.WAITING_JOB in statuses and StepStatus.RUNNING not in statuses
    if plan.status == PlanStatus.RUNNING and (settled or not still_parked):
        enqueue_execution(plan.pk)
    return plan


def plans_poll_due(limit: int = 100) -> int:
    """The beat job: poll a bounded batch of running plans with parked or abandoned steps."""
    ids = plans_needing_attention(limit)
    for plan_id in ids:
        plan_poll(plan_id)
    return len(ids)
