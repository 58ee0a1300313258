"""Reads: the plant with its latest values, trends bucketed in the database (the one trend
selector every app, agent and page uses), alarm lists."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import reduce
from typing import Any

from django.db.models import Count, F, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.utils import timezone

from core.errors import InvalidInput, NotFound
from sentinel.choices import ANNUNCIATED_STATES, OPEN_ALARM_STATES, AlarmState, Direction, Severity
from sentinel.history.reading import TrendWindow, beyond_rows, bucket_rows, trend_window
from sentinel.models import Alarm, AlarmEvent, Cell, SignalDefinition, SignalLatest
from sentinel.thresholds import Thresholds, threshold_values

MAX_TREND_MINUTES = 31 * 24 * 60
MAX_TREND_BUCKETS = 1000
# States that take an alarm out of the operator's view, each entered with a required reason.
SUPPRESSED_STATES = (AlarmState.SHELVED, AlarmState.OUT_OF_SERVICE)


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
        **{
            k: trend[k]
            for k in ("cell_id", "key", "display_name", "unit", "start", "end", "bucket_seconds", "resolution")
        },
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
    judges it). The resolution follows the range (sentinel/history/reading.py): raw samples up to
    2 h, 1-minute rollups up to 3 days, 1-hour rollups beyond; at a rollup resolution the window
    is aligned to it and the buckets are whole multiples of it (so there may be fewer than asked).
    At most three queries whatever the range, resolution and signal count. Every bucket is present
    (empty: n 0, null values)."""
    if not 1 <= minutes <= MAX_TREND_MINUTES:
        raise InvalidInput(f"minutes: must be between 1 and {MAX_TREND_MINUTES}", field="minutes")
    if not 1 <= buckets <= MAX_TREND_BUCKETS:
        raise InvalidInput(f"buckets: must be between 1 and {MAX_TREND_BUCKETS}", field="buckets")
    window = trend_window(minutes=minutes, buckets=buckets, end=end or timezone.now())
    ids = [s.pk for s in signals]
    found: dict[tuple[int, int], dict[str, Any]] = {}
    for bucket in bucket_rows(ids, window) if ids else []:
        # The database's epoch arithmetic may land a sample on the window's edge a hair outside.
        index = min(max(bucket["bucket"], 0), window.buckets - 1)
        merged = found.get((bucket["signal_id"], index))
        found[(bucket["signal_id"], index)] = bucket if merged is None else _merge_buckets(merged, bucket)
    breaches = _breach_windows(signals, window)
    result = []
    for signal in signals:
        points = []
        for index in range(window.buckets):
            row = found.get((signal.pk, index), {})
            points.append(
                {
                    "start": (window.start + timedelta(seconds=index * window.width)).isoformat(),
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
                "start": window.start.isoformat(),
                "end": window.end.isoformat(),
                "bucket_seconds": window.width,
                "resolution": window.resolution,
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


def _breach_windows(signals: Sequence[SignalDefinition], window: TrendWindow) -> dict[int, dict[str, Any]]:
    """Per signal, the samples beyond its limits (grouped queries): the high side (above the
    lowest high limit) when any sample breached it, else the low side (below low_alert). At a
    rollup resolution, first/last are the bounds of the breaching buckets."""
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
    merged: dict[int, dict[str, Any]] = {}
    for row in beyond_rows([s.pk for s in signals], window, beyond):
        into = merged.setdefault(row["signal_id"], {})
        for side in beyond:
            n = row.get(f"{side}_n") or 0
            if not n:
                continue
            first, last = row[f"{side}_first"], row[f"{side}_last"]
            if side in into:
                into[side] = (min(into[side][0], first), max(into[side][1], last), into[side][2] + n)
            else:
                into[side] = (first, last, n)
    windows = {}
    for signal_id, found in merged.items():
        side = "high" if "high" in found else "low"
        if side not in found:
            continue
        first, last, n = found[side]
        windows[signal_id] = {
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
    if severity is not None:  # `?severity=` names no severity: the schema's enum does not offer ""
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


def alarm_suppressions(alarms: Sequence[Alarm]) -> dict[int, dict[str, Any]]:
    """Why each shelved or out-of-service alarm of `alarms` is out of view, by alarm id: the move into
    its current state (`by` the username or None, `since`, `reason` as the operator gave it) and,
    for a shelve, until when (`until`, `until_work_order_closes`). One query whatever their number
    (none when none is suppressed). An event from the state to itself (an escalation recorded while
    shelved) is not the move, so its empty comment never hides the operator's reason."""
    hidden = {a.pk: a for a in alarms if a.state in SUPPRESSED_STATES}
    if not hidden:
        return {}
    move_into_state = (
        AlarmEvent.objects.filter(alarm=OuterRef("pk"), to_state=OuterRef("state"))
        .exclude(from_state=F("to_state"))
        .order_by("-id")
        .values("id")[:1]
    )
    moves = Alarm.objects.filter(pk__in=hidden).annotate(move_id=Subquery(move_into_state)).values("move_id")
    events = {e.alarm_id: e for e in AlarmEvent.objects.filter(pk__in=moves).select_related("actor")}
    out: dict[int, dict[str, Any]] = {}
    for pk, alarm in hidden.items():
        event = events.get(pk)
        shelved = alarm.state == AlarmState.SHELVED
        out[pk] = {
            "state": alarm.state,
            "by": event.actor.get_username() if event and event.actor else None,
            "since": event.created_at.isoformat() if event else None,
            "reason": event.comment if event else "",
            "until": alarm.shelved_until.isoformat() if shelved and alarm.shelved_until else None,
            "until_work_order_closes": shelved and alarm.shelved_until_work_order_closes,
        }
    return out
