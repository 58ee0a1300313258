"""Reads: the plant with its latest values, trends bucketed in the database, alarm lists."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db.models import Avg, Count, FloatField, Func, IntegerField, Max, Min, Prefetch, Q, QuerySet
from django.db.models.functions import Cast, Floor
from django.utils import timezone

from core.errors import InvalidInput, NotFound
from sentinel.choices import ANNUNCIATED_STATES, OPEN_ALARM_STATES, AlarmState, Severity
from sentinel.models import Alarm, Cell, SignalDefinition, SignalLatest, SignalSample

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
    """min/avg/max per time bucket over the last `minutes`, aggregated by the database.
    Every bucket is present (empty ones have count 0 and null values) so a chart's x axis is even."""
    if not 1 <= minutes <= MAX_TREND_MINUTES:
        raise InvalidInput(f"minutes: must be between 1 and {MAX_TREND_MINUTES}", field="minutes")
    if not 1 <= buckets <= MAX_TREND_BUCKETS:
        raise InvalidInput(f"buckets: must be between 1 and {MAX_TREND_BUCKETS}", field="buckets")
    signal = signal if isinstance(signal, SignalDefinition) else signal_get(signal)
    end = end or timezone.now()
    start = end - timedelta(minutes=minutes)
    width = minutes * 60 / buckets
    start_epoch = start.timestamp()
    rows = (
        SignalSample.objects.filter(signal_id=signal.pk, time__gte=start, time__lt=end)
        .annotate(bucket=Cast(Floor((EpochSeconds("time") - start_epoch) / width), IntegerField()))
        .values("bucket")
        .annotate(min=Min("value"), avg=Avg("value"), max=Max("value"), count=Count("id"))
        .order_by("bucket")
    )
    found = {r["bucket"]: r for r in rows}
    points = []
    for index in range(buckets):
        row = found.get(index, {})
        points.append(
            {
                "time": (start + timedelta(seconds=index * width)).isoformat(),
                "min": row.get("min"),
                "avg": row.get("avg"),
                "max": row.get("max"),
                "count": row.get("count", 0),
            }
        )
    return {
        "signal_id": signal.pk,
        "cell_id": signal.cell_id,
        "key": signal.key,
        "display_name": signal.display_name,
        "unit": signal.unit,
        "start": start.isoformat(),
        "end": end.isoformat(),
        "bucket_seconds": width,
        "thresholds": {
            "low_alert": signal.low_alert,
            "alert": signal.alert,
            "high_alert": signal.high_alert,
            "trip": signal.trip,
        },
        "points": points,
    }


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
