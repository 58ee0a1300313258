"""Sentinel's Celery tasks (thin: call one service)."""

from celery import shared_task
from django.conf import settings

from sentinel.services import sentinel_scan

# A scan that overruns several intervals is stuck; the next beat starts a fresh one.
_LIMIT = max(30, int(10 * float(settings.ARIA_SENTINEL_INTERVAL)))


@shared_task(name="sentinel.scan", acks_late=True, soft_time_limit=_LIMIT, time_limit=_LIMIT + 10)
def scan_task() -> dict:
    """Beat entry `sentinel.scan`. Idempotent: overlapping runs cannot duplicate alarms."""
    return sentinel_scan().as_dict()
