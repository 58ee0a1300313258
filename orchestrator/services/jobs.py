"""Parked steps: ask each job's resolver whether it finished, settle the step, resume the plan.

A job result that lands after its plan ended (cancelled, failed, completed) is refused: the step stays
as the plan's end left it, no ask is opened, and one `plan.job_result_ignored` audit row says why."""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from core.audit import audit_record
from core.capabilities import JobHandle, job_status
from core.models import AuditRecord
from orchestrator.choices import PLAN_FINISHED, PlanStatus, StepStatus
from orchestrator.dispatch import enqueue_execution
from orchestrator.models import Plan, PlanStep
from orchestrator.services.executor import plans_needing_attention, settle_result
from orchestrator.services.plans import plan_updated

logger = logging.getLogger(__name__)


def step_settle_job(plan: Plan, step: PlanStep, state: str, details: dict) -> bool:
    """waiting_job → done / confirm ask / failed, guarded in the query (two pollers settle once).
    Refused (False) once the plan has ended: see job_result_ignore."""
    with transaction.atomic():
        # Lock order: plan, then step. A cancel either committed first (refused here) or waits for this.
        plan.status = Plan.objects.select_for_update().values_list("status", flat=True).get(pk=plan.pk)
        if plan.status in PLAN_FINISHED:
            job_result_ignore(plan, step, state)
            return False
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


def job_result_ignore(plan: Plan, step: PlanStep, state: str) -> None:
    """Record (once per step and job) that the job's result came after the plan ended; nothing moves."""
    job = f"{step.job_kind} {step.job_ref}"
    if AuditRecord.objects.filter(
        action="plan.job_result_ignored", target_type="plan_step", target_id=str(step.pk), details__job=job
    ).exists():
        return
    reason = f"plan {plan.pk} is {plan.status}; a job result after it ended is not recorded"
    logger.info("Plan %s step %s: job %s result (%s) ignored: %s", plan.pk, step.order, job, state, reason)
    audit_record(
        actor=None, action="plan.job_result_ignored", target_type="plan_step", target_id=step.pk,
        details={"plan_id": plan.pk, "order": step.order, "job": job, "state": state, "reason": reason},
    )  # fmt: skip


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
