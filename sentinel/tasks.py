"""Sentinel's Celery tasks (thin: call one service)."""

from celery import shared_task
from django.conf import settings

from sentinel.services import sentinel_scan
from sentinel.services.scan import CellGroup, scan_group_count, shelves_expire

# A scan that overruns several intervals is stuck; the next beat starts a fresh one.
_LIMIT = max(30, int(10 * float(settings.ARIA_SENTINEL_INTERVAL)))


@shared_task(name="sentinel.scan", acks_late=True, soft_time_limit=_LIMIT, time_limit=_LIMIT + 10)
def scan_task() -> dict:
    """Beat entry `sentinel.scan`. With one cell group (ARIA_SCAN_GROUPS=1) it scans everything
    itself; with more it expires timed shelves and fans out one `sentinel.scan_group` task per
    group, so the workers share the round. Idempotent: overlapping runs cannot duplicate alarms.
    The groups go straight to the broker (`.delay()`, not the dispatch outbox): each round fans
    out every group again, so a group lost with its worker (or with a failed send) is scanned by
    the next round, one interval later, and a late redelivered copy only rescans (harmless)."""
    count = scan_group_count()
    if count == 1:
        return sentinel_scan().as_dict()
    unshelved = shelves_expire()
    for index in range(count):
        scan_group_task.delay(index, count)
    return {"unshelved": unshelved, "groups": count}


@shared_task(name="sentinel.scan_group", acks_late=True, soft_time_limit=_LIMIT, time_limit=_LIMIT + 10)
def scan_group_task(index: int, count: int) -> dict:
    """One cell group of a scan round (fanned out by `sentinel.scan`)."""
    return sentinel_scan(group=CellGroup(index, count)).as_dict()
