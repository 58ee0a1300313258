"""Thin Celery tasks: load by id, guard the state, call one service."""

from celery import shared_task

from orchestrator.choices import PlanStatus
from orchestrator.models import Plan
from orchestrator.services.executor import plan_execute
from orchestrator.services.jobs import plans_poll_due


@shared_task(name="orchestrator.execute_plan", acks_late=True, soft_time_limit=900, time_limit=960)
def execute_plan_task(plan_id: int) -> str:
    if not Plan.objects.filter(pk=plan_id, status=PlanStatus.RUNNING).exists():
        return "not running"
    return plan_execute(plan_id).status


@shared_task(name="orchestrator.poll_jobs", acks_late=True, soft_time_limit=240, time_limit=300)
def poll_jobs_task() -> int:
    return plans_poll_due()
