"""The trend selector's reads at each resolution: raw samples up to 2 h, 1-minute rollups up to
3 days, 1-hour rollups beyond (so a 30-day chart reads 720 rows per signal, not 2.6 million).

A window at a rollup resolution is aligned to it, and split into the buckets the rollup holds
(read from the rollup table) and the ones it may not hold yet — marked dirty, or the current
partial bucket — read from the raw samples; both are aggregated by the database into the
chart's buckets. A fixed number of queries whatever the range, resolution and signal count."""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import reduce
from typing import Any, cast

from django.db.models import BooleanField, Count, F, FloatField, Func, IntegerField, Max, Min, Q, QuerySet, Sum, Value
from django.db.models.functions import Cast, Floor

from sentinel.history.buckets import HOUR, MINUTE, Range, aligned, ranges_of
from sentinel.models import HistoryDirtyMinute, SampleRollupHour, SampleRollupMinute, SignalSample

RAW_MAX_MINUTES = 2 * 60
MINUTE_ROLLUP_MAX_MINUTES = 3 * 24 * 60


class EpochSeconds(Func):
    """Seconds since 1970 of a datetime column, on PostgreSQL and SQLite."""

    output_field = FloatField()

    def as_postgresql(self, compiler, connection, **extra):
        return self.as_sql(compiler, connection, template="EXTRACT(EPOCH FROM %(expressions)s)", **extra)

    def as_sqlite(self, compiler, connection, **extra):
        return self.as_sql(
            compiler, connection, template="((julianday(%(expressions)s) - 2440587.5) * 86400.0)", **extra
        )


@dataclass
class TrendWindow:
    """Where a trend reads: its chart buckets and which time ranges come from raw or a rollup."""

    resolution: str  # raw | 1m | 1h
    start: datetime
    end: datetime
    width: float  # seconds per chart bucket
    buckets: int
    raw: list[Range] = field(default_factory=list)
    rolled: list[Range] = field(default_factory=list)

    @property
    def rollup(self) -> type[SampleRollupMinute] | type[SampleRollupHour]:
        return SampleRollupMinute if self.resolution == "1m" else SampleRollupHour

    @property
    def step(self) -> timedelta:
        return MINUTE if self.resolution == "1m" else HOUR


def trend_window(*, minutes: int, buckets: int, end: datetime) -> TrendWindow:
    """The resolution for the range, the aligned chart buckets (at a rollup resolution: as many
    as asked when the range divides evenly, else fewer and wider), and which parts are read from
    the rollup and which raw (one query at a rollup resolution: the dirty minutes)."""
    if minutes <= RAW_MAX_MINUTES:
        start = end - timedelta(minutes=minutes)
        return TrendWindow("raw", start, end, minutes * 60 / buckets, buckets, raw=[(start, end)])
    resolution, step = ("1m", MINUTE) if minutes <= MINUTE_ROLLUP_MAX_MINUTES else ("1h", HOUR)
    # Chart buckets are whole multiples of the resolution, the last one holding `end`.
    width = math.ceil(minutes * 60 / buckets / step.total_seconds()) * step.total_seconds()
    count = math.ceil(minutes * 60 / width)
    start = aligned(end, step) + step - timedelta(seconds=count * width)
    window = TrendWindow(resolution, start, end, width, count)
    tail = aligned(end, step)
    marks = HistoryDirtyMinute.objects.filter(minute__gte=start, minute__lt=tail)
    dirty = marks.values_list("minute", flat=True).distinct()
    unrolled = {aligned(m, step) for m in dirty}
    window.raw = ranges_of([*unrolled, tail], step)
    window.raw[-1] = (window.raw[-1][0], end)  # the partial bucket at the end, up to `end`
    cursor = start
    for raw_start, raw_end in window.raw:
        if cursor < raw_start:
            window.rolled.append((cursor, raw_start))
        cursor = raw_end
    return window


def _in_ranges(column: str, ranges: list[Range]) -> Q:
    return _or(Q(**{f"{column}__gte": start, f"{column}__lt": end}) for start, end in ranges)


def _index(column: str, window: TrendWindow, *, nudge: float = 0.0) -> Cast:
    origin = window.start.timestamp() - nudge
    return Cast(Floor((EpochSeconds(column) - origin) / window.width), IntegerField())


def _union(parts: list[QuerySet[Any]]) -> list[dict[str, Any]]:
    """One query for the raw and the rollup parts (UNION ALL of their grouped rows)."""
    if not parts:
        return []
    query = parts[0] if len(parts) == 1 else parts[0].union(*parts[1:], all=True)
    return [dict(row) for row in query]


def bucket_rows(signal_ids: list[int], window: TrendWindow) -> list[dict[str, Any]]:
    """Per (signal_id, bucket index): min, avg, max, n — raw and rollup parts in one query."""
    parts: list[QuerySet[Any]] = []
    if window.raw:
        raw = SignalSample.objects.filter(_in_ranges("time", window.raw), signal_id__in=signal_ids)
        parts.append(
            raw.annotate(slot=_index("time", window))
            .values("signal_id", "slot")
            .annotate(min=Min("value"), max=Max("value"), total=Sum("value"), n=Count("*"))
        )
    if window.rolled:
        rolled = window.rollup.objects.filter(_in_ranges("bucket", window.rolled), signal_id__in=signal_ids)
        parts.append(
            # Rollup buckets sit on chart-bucket edges: half a step keeps float error off the edge.
            rolled.annotate(slot=_index("bucket", window, nudge=window.step.total_seconds() / 2))
            .values("signal_id", "slot")
            .annotate(min=Min("min"), max=Max("max"), total=Sum(F("avg") * F("count")), n=Sum("count"))
        )
    return [
        {
            "signal_id": r["signal_id"],
            "bucket": r["slot"],
            "min": r["min"],
            "max": r["max"],
            "avg": r["total"] / r["n"] if r["n"] else None,
            "n": r["n"],
        }
        for r in _union(parts)
    ]


def beyond_rows(signal_ids: list[int], window: TrendWindow, beyond: dict[str, Q]) -> list[dict[str, Any]]:
    """Per signal and side (`high`/`low`): first, last and count of the values beyond a limit.
    `beyond` holds, per side, a Q over (signal_id, value). At a rollup resolution a rolled bucket
    counts when its max (high) or min (low) is beyond: first/last are its bounds and the count
    is its sample count. Raw and rollup parts in one query."""
    parts: list[QuerySet[Any]] = []
    if window.raw:
        aggregates: dict[str, Any] = {"rolled": Value(False, output_field=BooleanField())}
        for side, q in beyond.items():
            aggregates |= {
                f"{side}_first": Min("time", filter=q),
                f"{side}_last": Max("time", filter=q),
                f"{side}_n": Count("value", filter=q),
            }
        raw = SignalSample.objects.filter(_in_ranges("time", window.raw), signal_id__in=signal_ids)
        parts.append(raw.filter(_or(beyond.values())).values("signal_id").annotate(**aggregates))
    if window.rolled:
        # The same conditions on the bucket's extreme: `value` becomes max (high) or min (low).
        sides = {side: _on_extreme(q, "max" if side == "high" else "min") for side, q in beyond.items()}
        aggregates = {"rolled": Value(True, output_field=BooleanField())}
        for side, q in sides.items():
            aggregates |= {
                f"{side}_first": Min("bucket", filter=q),
                f"{side}_last": Max("bucket", filter=q),
                f"{side}_n": Sum("count", filter=q),
            }
        rolled = window.rollup.objects.filter(_in_ranges("bucket", window.rolled), signal_id__in=signal_ids)
        parts.append(rolled.filter(_or(sides.values())).values("signal_id").annotate(**aggregates))
    found = _union(parts)
    for row in found:
        for side in beyond:
            if row["rolled"] and row.get(f"{side}_last") is not None:
                row[f"{side}_last"] += window.step - timedelta(microseconds=1)
    return found


def _or(qs: Iterable[Q]) -> Q:
    return reduce(operator.or_, qs)


def _on_extreme(q: Q, extreme: str) -> Q:
    """A copy of `q` with its `value…` lookups on the rollup's `min` or `max` column instead."""
    clone = Q(_connector=q.connector, _negated=q.negated)
    for child in q.children:
        if isinstance(child, Q):
            clone.children.append(_on_extreme(child, extreme))
        else:
            name, value = cast(tuple[str, Any], child)
            clone.children.append((name.replace("value", extreme, 1) if name.startswith("value") else name, value))
    return clone
