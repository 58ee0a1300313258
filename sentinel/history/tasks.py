"""History's Celery tasks (thin: call one service). Beat entries in settings."""

from celery import shared_task

from sentinel.history.retention import history_upkeep
from sentinel.history.rollups import history_rollup


@shared_task(name="sentinel.history_rollup", acks_late=True, soft_time_limit=120, time_limit=150)
def history_rollup_task() -> dict:
    """Beat entry `sentinel.history_rollup`: one bounded batch of dirty minutes (safe to overlap)."""
    return history_rollup().as_dict()


@shared_task(name="sentinel.history_upkeep", acks_late=True, soft_time_limit=600, time_limit=660)
def history_upkeep_task() -> dict:
    """Beat entry `sentinel.history_upkeep`: partitions ahead, retention. Idempotent."""
    return history_upkeep().as_dict()
