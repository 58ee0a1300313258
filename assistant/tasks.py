from celery import shared_task

from assistant.services.draft_sweep import drafts_expire_stale
from assistant.services.runs import runs_expire_stale
from assistant.services.tool_calls import tool_calls_expire_stale


@shared_task(name="assistant.expire_stale_runs", acks_late=True, soft_time_limit=30, time_limit=60)
def expire_stale_runs_task() -> int:
    """Periodic watchdog (one beat entry): fail assistant runs left running past their timeout;
    expire held tool calls nobody decided on and close confirmed ones whose process died; move on
    drafts left mid-step (validating, testing, reviewing, publishing) by a process that stopped."""
    return runs_expire_stale() + tool_calls_expire_stale() + drafts_expire_stale()
