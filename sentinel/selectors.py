"""Reads: the plant with its latest values, trends bucketed in the database (the one trend
selector every app, agent and page uses), alarm lists."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import reduce
from typing import Any

from django.db.models import Avg, Count, FloatField, Func, IntegerField, Max, Min, Prefetch, Q, QuerySet
from django.db.models.functions import Cast, Floor
from django.utils import timezone

from core.errors import InvalidInput, NotFound
from sentinel.choices import ANNUNCIATED_STATES, OPEN_ALARM_STATES, AlarmState, Direction, Severity
from sentinel.models import Alarm, Cell, SignalDefinition, SignalLatest, SignalSample
from sentinel.thresholds import Thresholds, threshold_values

MAX_TREND_MINUTES = 7 * 24 * 60
MAX_TREND_BUCKETS = 1000


class EpochSeconds(Func):
    """Seconds since 1970 of a datetime column, on PostgreSQL and SQLite."""

    output_field = FloatField()

    def as_postgresql(self, compiler, connection, **extra):
        return self.as_sql(compiler, connection, template="EXTRACT(EPOCH FROM %(expressions)s)", **extra)

    def as_sqlite(self, compiler, connection, **extra):
        return self.as_sql(
            compiler, connection, template="((julianday(%(expressions)s) - 2440587.5) * 86400.0)", **extra
        )


def cells_with_signals() -> QuerySet[Cell]:
    """Cells with their signals (and each one's latest value) and the count of active alarms."""
    signals = SignalDefinition.objects.select_related("latest").order_by("key")
    return (
        Cell.objects.select_related("line__site")
        .prefetch_related(Prefetch("signals", queryset=signals))
        .annotate(
            active_alarm_count=Count("signals__alarms", filter=Q(signals__alarms__state__in=ANNUNCIATED_STATES)),
            open_alarm_count=Count("signals__alarms", filter=Q(signals__alarms__state__in=OPEN_ALARM_STATES)),
        )
        .order_by("tag")
    )


def signals_latest(*, cell_id: int | None = None, enabled_only: bool = True) -> QuerySet[SignalLatest]:
    qs = SignalLatest.objects.select_related("signal__cell").order_by("signal__cell__tag", "signal__key")
    if enabled_only:
        qs = qs.filter(signal__enabled=True)
    if cell_id is not None:
        qs = qs.filter(signal__cell_id=cell_id)
    return qs


def signal_get(signal_id: int) -> SignalDefinition:
    try:
        return SignalDefinition.objects.select_related("cell").get(pk=signal_id)
    except SignalDefinition.DoesNotExist:
        raise NotFound(f"Signal {signal_id} not found.", field="signal_id") from None


def signal_trends(
    *, signal: SignalDefinition | int, minutes: int = 60, buckets: int = 60, end: datetime | None = None
) -> dict[str, Any]:
    """One signal's trend for a chart (the API's shape): `trends()` with `points` of
    time/min/avg/max/count. Every bucket is present (empty ones have count 0 and null values)."""
    signal = signal if isinstance(signal, SignalDefinition) else signal_get(signal)
    trend = trends([signal], minutes=minutes, buckets=buckets, end=end)[0]
    points = [
        {"time": b["start"], "min": b["min"], "avg": b["avg"], "max": b["max"], "count": b["n"]}
        for b in trend["buckets"]
    ]
    return {
        "signal_id": signal.pk,
        **{k: trend[k] for k in ("cell_id", "key", "display_name", "unit", "start", "end", "bucket_seconds")},
        "thresholds": trend["thresholds"],
        "points": points,
    }


def trends(
    signals: Sequence[SignalDefinition],
    *,
    minutes: int = 60,
    buckets: int = 60,
    end: datetime | None = None,
    digits: int | None = None,
) -> list[dict[str, Any]]:
    """The one trend selector: min/avg/max per time bucket of each signal over the last `minutes`,
    with its peak, low and breach window (first/last sample beyond a limit, as `evaluate_threshold`
    judges it). Two queries whatever the bucket and signal counts: the buckets, aggregated by the
    database, and the breach windows. Every bucket is present (empty: n 0, null values)."""
    if not 1 <= minutes <= MAX_TREND_MINUTES:
        raise InvalidInput(f"minutes: must be between 1 and {MAX_TREND_MINUTES}", field="minutes")
    if not 1 <= buckets <= MAX_TREND_BUCKETS:
        raise InvalidInput(f"buckets: must be between 1 and {MAX_TREND_BUCKETS}", field="buckets")
    end = end or timezone.now()
    start = end - timedelta(minutes=minutes)
    width = minutes * 60 / buckets
    ids = [s.pk for s in signals]
    found: dict[tuple[int, int], dict[str, Any]] = {}
    if ids:
        rows = (
            SignalSample.objects.filter(signal_id__in=ids, time__gte=start, time__lt=end)
            .annotate(bucket=Cast(Floor((EpochSeconds("time") - start.timestamp()) / width), IntegerField()))
            .values("signal_id", "bucket")
            .annotate(min=Min("value"), avg=Avg("value"), max=Max("value"), n=Count("*"))
        )
        for aggregate in rows:
            bucket: dict[str, Any] = dict(aggregate)
            # The database's epoch arithmetic may land a sample on the window's edge a hair outside.
            index = min(max(bucket["bucket"], 0), buckets - 1)
            merged = found.get((bucket["signal_id"], index))
            found[(bucket["signal_id"], index)] = bucket if merged is None else _merge_buckets(merged, bucket)
    breaches = _breach_windows(signals, start, end)
    result = []
    for signal in signals:
        points = []
        for index in range(buckets):
            row = found.get((signal.pk, index), {})
            points.append(
                {
                    "start": (start + timedelta(seconds=index * width)).isoformat(),
                    "min": _round(row.get("min"), digits),
                    "avg": _round(row.get("avg"), digits),
                    "max": _round(row.get("max"), digits),
                    "n": row.get("n", 0),
                }
            )
        maxima = [p["max"] for p in points if p["max"] is not None]
        minima = [p["min"] for p in points if p["min"] is not None]
        result.append(
            {
                "signal_def_id": signal.pk,
                "cell_id": signal.cell_id,
                "key": signal.key,
                "display_name": signal.display_name,
                "unit": signal.unit,
                "start": start.isoformat(),
                "end": end.isoformat(),
                "bucket_seconds": width,
                "thresholds": threshold_values(signal),
                "peak": max(maxima) if maxima else None,
                "low": min(minima) if minima else None,
                "breach": breaches.get(signal.pk),
                "buckets": points,
            }
        )
    return result


def _merge_buckets(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    n = a["n"] + b["n"]
    return {
        "min": min(a["min"], b["min"]),
        "max": max(a["max"], b["max"]),
        "avg": (a["avg"] * a["n"] + b["avg"] * b["n"]) / n,
        "n": n,
    }


def _breach_windows(signals: Sequence[SignalDefinition], start: datetime, end: datetime) -> dict[int, dict[str, Any]]:
    """Per signal, the samples beyond its limits in one grouped query: the high side (above the
    lowest high limit) when any sample breached it, else the low side (below low_alert)."""
    sides: dict[str, list[Q]] = {Direction.HIGH: [], Direction.LOW: []}
    for signal in signals:
        t = Thresholds.of(signal)
        if t.lowest_high is not None:
            sides[Direction.HIGH].append(Q(signal_id=signal.pk, value__gt=t.lowest_high))
        if t.low_alert is not None:
            sides[Direction.LOW].append(Q(signal_id=signal.pk, value__lt=t.low_alert))
    beyond = {str(side): reduce(operator.or_, qs) for side, qs in sides.items() if qs}
    if not beyond:
        return {}
    aggregates: dict[str, Any] = {}
    for side, q in beyond.items():
        aggregates |= {
            f"{side}_first": Min("time", filter=q),
            f"{side}_last": Max("time", filter=q),
            f"{side}_n": Count("value", filter=q),
        }
    rows = (
        SignalSample.objects.filter(signal_id__in=[s.pk for s in signals], time__gte=start, time__lte=end)
        .filter(reduce(operator.or_, beyond.values()))
        .values("signal_id")
        .annotate(**aggregates)
    )
    windows = {}
    for aggregate in rows:
        row: dict[str, Any] = dict(aggregate)
        side = "high" if row.get("high_n") else "low"
        first: datetime | None = row.get(f"{side}_first")
        last: datetime | None = row.get(f"{side}_last")
        n = row.get(f"{side}_n")
        if n and first is not None and last is not None:
            windows[row["signal_id"]] = {
                "direction": side,
                "first": first.isoformat(),
                "last": last.isoformat(),
                "samples": n,
                "duration_min": round((last - first).total_seconds() / 60, 1),
            }
    return windows


def _round(value: float | None, digits: int | None) -> float | None:
    return value if value is None or digits is None else round(value, digits)


def alarms_list(
    *, state: str | None = None, cell_id: int | None = None, cell_tag: str | None = None, severity: str | None = None
) -> QuerySet[Alarm]:
    """Alarms, newest first. `state` is one state, a comma list, or `open` (every open state)."""
    qs = Alarm.objects.select_related("signal__cell", "signal__latest", "acknowledged_by").order_by("-raised_at", "-pk")
    if state:
        states = list(OPEN_ALARM_STATES) if state == "open" else [s.strip() for s in state.split(",") if s.strip()]
        unknown = [s for s in states if s not in AlarmState.values]
        if unknown:
            raise InvalidInput(
                f"state: unknown state {unknown[0]!r}", field="state", allowed=[*AlarmState.values, "open"]
            )
        qs = qs.filter(state__in=states)
    if severity:
        if severity not in Severity.values:
            raise InvalidInput(f"severity: unknown severity {severity!r}", field="severity", allowed=Severity.values)
        qs = qs.filter(severity=severity)
    if cell_id is not None:
        qs = qs.filter(signal__cell_id=cell_id)
    if cell_tag:
        qs = qs.filter(signal__cell__tag=cell_tag)
    return qs


def alarm_get(alarm_id: int) -> Alarm:
    try:
        return Alarm.objects.select_related("signal__cell", "signal__latest", "acknowledged_by").get(pk=alarm_id)
    except Alarm.DoesNotExist:
        raise NotFound(f"Alarm {alarm_id} not found.", field="alarm_id") from None
