"""The orchestrator's reapers (registered with core.sweep): plans whose execute message was lost,
steps whose worker died while running them, and steps parked on a job that never finishes."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import CharField, Exists, Max, OuterRef, Value
from django.db.models.functions import Cast, Concat
from django.utils import timezone

from core.dispatch import dispatch_pending
from core.leases import lease_held
from core.models import DispatchIntent, WorkLease
from core.sweep import register_reaper
from orchestrator.choices import PlanStatus, StepStatus
from orchestrator.dispatch import enqueue_execution
from orchestrator.models import Plan, PlanStep
from orchestrator.services.executor import ready_steps, step_lease_key
from orchestrator.services.jobs import step_settle_job


def _seconds(name: str, default: float) -> float:
    return float(getattr(settings, name, default))


def plans_lost_execution(limit: int) -> int:
    """Running plans with a ready step that nobody touched for ARIA_STRANDED_AFTER_SECONDS and no
    execute message waiting in the outbox: their message was lost with a worker. Re-dispatched
    (plan_execute claims each step, so a duplicate is harmless); one intent per plan and window."""
    window = _seconds("ARIA_STRANDED_AFTER_SECONDS", 60.0)
    cutoff = timezone.now() - timedelta(seconds=window)
    idle = (
        Plan.objects.filter(status=PlanStatus.RUNNING, updated_at__lte=cutoff, steps__status=StepStatus.PENDING)
        .annotate(last_step_change=Max("steps__updated_at"))
        .filter(last_step_change__lte=cutoff)
        .order_by("pk")
        .distinct()
    )
    bucket = int(timezone.now().timestamp() // window)
    touched = 0
    for plan in idle[:limit]:
        if dispatch_pending(f"orchestrator.execute_plan:{plan.pk}:"):
            continue  # the broker is down or the relay has not run yet: it is on its way
        if not ready_steps(list(plan.steps.all())):
            continue  # waiting on a parked job or a human: not lost
        enqueue_execution(plan.pk, key=f"sweep-{bucket}")
        touched += 1
    return touched


def steps_lost_holder(limit: int) -> int:
    """Steps `running` whose work lease nobody holds any more (their worker died: a dead pid on this
    host, or a lease not renewed for ARIA_LEASE_TTL_SECONDS on any host) are lost at once: their
    plan is re-dispatched, and the executor takes the step over with the attempt's key. A step
    whose holder renews its lease is left alone however slow it is. One intent per step attempt
    and window (ARIA_STRANDED_AFTER_SECONDS), none while an execute message is waiting to be sent."""
    now = timezone.now()
    window = _seconds("ARIA_STRANDED_AFTER_SECONDS", 60.0)
    bucket = int(now.timestamp() // window)
    live_lease = WorkLease.objects.filter(
        key=Concat(Value("plan_step:"), Cast(OuterRef("pk"), CharField())), expires_at__gt=now
    )
    candidates = (
        PlanStep.objects.filter(status=StepStatus.RUNNING, plan__status=PlanStatus.RUNNING)
        .annotate(leased=Exists(live_lease))
        .order_by("pk")
    )
    touched = 0
    # Expired or missing leases first; an unexpired one is free only if its holder is a dead process
    # on this host (lease_held checks).
    for step in [*candidates.filter(leased=False)[:limit], *candidates.filter(leased=True)[:limit]]:
        if lease_held(step_lease_key(step.pk)):
            continue
        prefix = f"orchestrator.execute_plan:{step.plan_id}:"
        if dispatch_pending(prefix):
            continue  # the broker is down or the relay has not run yet: it is on its way
        claim = int(step.claimed_at.timestamp() * 1000) if step.claimed_at else 0
        key = f"step{step.pk}-lost-{claim}-{bucket}"  # a takeover moves claimed_at: a new key
        if DispatchIntent.objects.filter(dedupe_key=f"{prefix}{key}").exists():
            continue  # re-driven in this window already
        enqueue_execution(step.plan_id, key=key)
        touched += 1
    return touched


def steps_stuck_on_jobs(limit: int) -> int:
    """Steps parked on a job for longer than ARIA_PLAN_JOB_DEADLINE_SECONDS fail with that reason
    (their plan then fails and says why) instead of waiting forever."""
    deadline = _seconds("ARIA_PLAN_JOB_DEADLINE_SECONDS", 1800.0)
    cutoff = timezone.now() - timedelta(seconds=deadline)
    stuck = PlanStep.objects.filter(
        status=StepStatus.WAITING_JOB, updated_at__lte=cutoff, plan__status=PlanStatus.RUNNING
    ).select_related("plan", "plan__owner")
    touched = 0
    for step in stuck.order_by("pk")[:limit]:
        error = f"job {step.job_kind} {step.job_ref} made no progress for {deadline:.0f}s; the sweeper gave up on it"
        if step_settle_job(step.plan, step, "failed", {"error": error}):
            enqueue_execution(step.plan_id, key=f"job-deadline-{step.pk}")
            touched += 1
    return touched


def register() -> None:
    register_reaper("orchestrator.plans_lost_execution", plans_lost_execution)
    register_reaper("orchestrator.steps_lost_holder", steps_lost_holder)
    register_reaper("orchestrator.steps_stuck_on_jobs", steps_stuck_on_jobs)
