"""Retention by age. Raw samples are kept ARIA_HISTORY_RETENTION_DAYS, or the days of the first
ARIA_HISTORY_RETENTION_DAYS_BY_KIND pattern matching the signal's key (e.g. `vibration_*`);
minute and hour rollups have their own (longer) retention, 0 meaning forever.

PostgreSQL drops whole partitions older than the longest raw retention (no row-by-row delete, no
bloat); signals kept for less than that lose their older rows by a DELETE bounded to them.
SQLite (embedded mode) deletes by age."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from fnmatch import fnmatchcase

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from sentinel.history.partitions import partitions_drop_before, partitions_ensure
from sentinel.history.rollups import raw_horizon_days
from sentinel.history.schema import ROLLUP_HOUR, ROLLUP_MINUTE, SAMPLES, dirty_triggers_install
from sentinel.models import HistoryDirtyMinute, SampleRollupHour, SampleRollupMinute, SignalDefinition, SignalSample
from sentinel.services.ingest import ingest_batches_prune


@dataclass
class UpkeepResult:
    created: list[str] = field(default_factory=list)  # partitions created ahead
    dropped: list[str] = field(default_factory=list)  # partitions dropped by age
    deleted: int = 0  # rows deleted by age (SQLite, and shorter-lived kinds on PostgreSQL)
    ingest_batches: int = 0  # ingest idempotency keys forgotten (older than 24 h)

    def as_dict(self) -> dict[str, object]:
        return {
            "created": self.created,
            "dropped": self.dropped,
            "deleted": self.deleted,
            "ingest_batches": self.ingest_batches,
        }


def retention_days(key: str) -> int:
    """Raw retention of a signal with this key: the first matching kind pattern, else the default."""
    for pattern, days in settings.ARIA_HISTORY_RETENTION_DAYS_BY_KIND.items():
        if fnmatchcase(key, pattern):
            return int(days)
    return int(settings.ARIA_HISTORY_RETENTION_DAYS)


def _signals_by_retention() -> dict[int, list[int]]:
    groups: dict[int, list[int]] = defaultdict(list)
    for signal_id, key in SignalDefinition.objects.order_by("pk").values_list("pk", "key"):
        groups[retention_days(key)].append(signal_id)
    return groups


def history_upkeep(*, now: datetime | None = None) -> UpkeepResult:
    """The periodic job: the dirty-minute triggers (SQLite), partitions ahead (PostgreSQL), then
    retention of raw samples and rollups."""
    now = now or timezone.now()
    if connection.vendor == "sqlite":
        # Django rebuilds a SQLite table for some schema changes, dropping its triggers: put them back.
        with connection.cursor() as cursor:
            dirty_triggers_install(cursor, connection.vendor)
    result = UpkeepResult(created=partitions_ensure(now=now))
    horizon = now - timedelta(days=raw_horizon_days())
    postgresql = connection.vendor == "postgresql"
    if postgresql:
        result.dropped += partitions_drop_before(SAMPLES, horizon)
    with transaction.atomic():
        for days, signal_ids in sorted(_signals_by_retention().items()):
            cutoff = now - timedelta(days=days)
            if postgresql and cutoff <= horizon:
                continue  # the partition drop covers them
            for start in range(0, len(signal_ids), 500):  # under SQLite's variable limit
                chunk = signal_ids[start : start + 500]
                result.deleted += SignalSample.objects.filter(signal_id__in=chunk, time__lt=cutoff).delete()[0]
        HistoryDirtyMinute.objects.filter(minute__lt=horizon).delete()
    for model, table, days in (
        (SampleRollupMinute, ROLLUP_MINUTE, settings.ARIA_HISTORY_MINUTE_ROLLUP_RETENTION_DAYS),
        (SampleRollupHour, ROLLUP_HOUR, settings.ARIA_HISTORY_HOUR_ROLLUP_RETENTION_DAYS),
    ):
        if days <= 0:
            continue
        cutoff = now - timedelta(days=days)
        if postgresql:
            result.dropped += partitions_drop_before(table, cutoff)
        else:
            result.deleted += model.objects.filter(bucket__lt=cutoff).delete()[0]
    result.ingest_batches = ingest_batches_prune(now=now)
    return result
