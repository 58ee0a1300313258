"""1-minute and 1-hour rollups (min/max/avg/count/last per signal and bucket), kept current from the
dirty-minute log.

Every insert or update of samples marks its minutes in `HistoryDirtyMinute` (a trigger, in the
writer's transaction). `history_rollup` takes a bounded batch of completed dirty minutes, removes
their marks, recomputes those minutes for every signal from the raw samples, and recomputes the
hours holding them from the minute rollups. A late or out-of-order sample marks its (old) minute,
so the buckets it touches are rolled again. Marks are removed before the recompute reads the
samples: a writer that commits in between leaves its own mark, so nothing is ever lost, and a
reader treats a marked bucket as not rolled yet (it reads the raw samples there)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from sentinel.history.buckets import HOUR, MINUTE, Range, aligned, ranges_of, ranges_sql, truncate_sql
from sentinel.history.schema import ROLLUP_HOUR, ROLLUP_MINUTE, SAMPLES
from sentinel.models import HistoryDirtyMinute

_LOCK_KEY = 0x5E47_0001  # pg_advisory_xact_lock: one rollup at a time


@dataclass
class RollupResult:
    minutes: int = 0  # dirty minutes taken
    minute_rows: int = 0
    hour_rows: int = 0
    skipped: int = 0  # marks older than the raw retention (their samples may be gone): dropped

    def as_dict(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in ("minutes", "minute_rows", "hour_rows", "skipped")}


def raw_horizon_days() -> int:
    """The longest raw retention of any signal kind: older raw samples are gone or going."""
    return max([settings.ARIA_HISTORY_RETENTION_DAYS, *settings.ARIA_HISTORY_RETENTION_DAYS_BY_KIND.values()])


def _roll(cursor: Any, *, source: str, column: str, target: str, width: timedelta, ranges: list[Range]) -> int:
    """Recompute `target`'s buckets in `ranges` from `source` (samples or minute rollups)."""
    where, params = ranges_sql("bucket", ranges)
    cursor.execute(f"DELETE FROM {target} WHERE {where}", params)
    bucket = truncate_sql(column, width)
    where, params = ranges_sql(column, ranges)
    if source == SAMPLES:
        measures = "MIN(value) AS mn, MAX(value) AS mx, AVG(value) AS av, COUNT(*) AS n"
        last = "s.value"
    else:  # an hour from its minutes: the average weighted by each minute's count
        measures = 'MIN("min") AS mn, MAX("max") AS mx, SUM("avg" * "count") / SUM("count") AS av, SUM("count") AS n'
        last = 's."last"'
    cursor.execute(
        f'INSERT INTO {target} (signal_id, bucket, "min", "max", "avg", "count", "last") '
        f"SELECT b.signal_id, b.bucket, b.mn, b.mx, b.av, b.n, {last} FROM "
        f"(SELECT signal_id, {bucket} AS bucket, {measures}, MAX({column}) AS latest FROM {source} "
        f"WHERE {where} GROUP BY signal_id, {bucket}) AS b "
        f"JOIN {source} AS s ON s.signal_id = b.signal_id AND s.{column} = b.latest",
        params,
    )
    return cursor.rowcount


def history_rollup(*, now: datetime | None = None, batch: int | None = None) -> RollupResult:
    """Roll up the oldest `batch` (ARIA_HISTORY_ROLLUP_BATCH_MINUTES) completed dirty minutes and
    their hours. Safe to run concurrently (one waits for the other) and to run twice."""
    now = now or timezone.now()
    batch = batch or settings.ARIA_HISTORY_ROLLUP_BATCH_MINUTES
    result = RollupResult()
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_KEY])
        marks = HistoryDirtyMinute.objects.filter(minute__lt=aligned(now, MINUTE))
        minutes = list(marks.values_list("minute", flat=True).distinct().order_by("minute")[:batch])
        if not minutes:
            return result
        # Removed before the samples are read: a writer committing after this keeps its own mark.
        HistoryDirtyMinute.objects.filter(minute__in=minutes).delete()
        horizon = now - timedelta(days=raw_horizon_days())
        kept = [m for m in minutes if m >= horizon]
        result.minutes, result.skipped = len(minutes), len(minutes) - len(kept)
        if not kept:
            return result
        result.minute_rows = _roll(
            cursor, source=SAMPLES, column="time", target=ROLLUP_MINUTE, width=MINUTE, ranges=ranges_of(kept, MINUTE)
        )
        hours = ranges_of((aligned(m, HOUR) for m in kept), HOUR)
        result.hour_rows = _roll(
            cursor, source=ROLLUP_MINUTE, column="bucket", target=ROLLUP_HOUR, width=HOUR, ranges=hours
        )
    return result


def history_rollup_all(*, now: datetime | None = None) -> RollupResult:
    """Roll up every completed dirty minute (batch after batch): for backfills and benchmarks."""
    total = RollupResult()
    while True:
        step = history_rollup(now=now)
        if not step.minutes:
            return total
        for name, value in step.as_dict().items():
            setattr(total, name, getattr(total, name) + value)
