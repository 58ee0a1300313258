"""Reads the capabilities, API and agents share: signals, trends, anomalies, work orders."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db.models import Avg, Count, Max, Min, QuerySet
from django.utils import timezone

from core.errors import NotFound
from sentinel.models import Alarm, Cell, SignalDefinition, SignalLatest, SignalSample
from workorders.models import EquipmentKB, FailureHistory, WorkOrder

THRESHOLD_FIELDS = ("low_alert", "alert", "high_alert", "trip")


def get_cell(cell_id: int) -> Cell:
    try:
        return Cell.objects.select_related("line__site").get(pk=cell_id)
    except Cell.DoesNotExist:
        raise NotFound(f"Cell {cell_id} not found.", field="cell_id") from None


def thresholds(signal: SignalDefinition) -> dict[str, float | None]:
    return {name: getattr(signal, name) for name in THRESHOLD_FIELDS}


def signal_state(signal: SignalDefinition, value: float | None) -> str:
    """normal | alert | trip | low | unknown for a value against the signal's thresholds."""
    if value is None:
        return "unknown"
    if signal.trip is not None and value >= signal.trip:
        return "trip"
    highs = [t for t in (signal.high_alert, signal.alert) if t is not None]
    if highs and value >= min(highs):
        return "alert"
    if signal.low_alert is not None and value <= signal.low_alert:
        return "low"
    return "normal"


def current_signals(cell: Cell) -> list[dict[str, Any]]:
    signals = list(SignalDefinition.objects.filter(cell=cell, enabled=True).order_by("key"))
    latest = {row.signal_id: row for row in SignalLatest.objects.filter(signal__in=signals)}
    rows = []
    for signal in signals:
        row = latest.get(signal.pk)
        value = row.value if row else None
        rows.append(
            {
                "signal_def_id": signal.pk,
                "key": signal.key,
                "name": signal.display_name,
                "unit": signal.unit,
                "value": value,
                "time": row.time.isoformat() if row else None,
                "stale": bool(row and row.stale),
                "state": signal_state(signal, value),
                "thresholds": thresholds(signal),
            }
        )
    return rows


def signal_trends(
    signals: list[SignalDefinition], *, minutes: int, buckets: int, end: datetime | None = None
) -> list[dict[str, Any]]:
    """Min/avg/max per time bucket per signal, plus the breach window (first/last beyond alert)."""
    end = end or timezone.now()
    start = end - timedelta(minutes=minutes)
    width = (end - start) / buckets
    ids = [s.pk for s in signals]
    series: dict[int, list[dict[str, Any]]] = {pk: [] for pk in ids}
    # One aggregate query per bucket (bounded by `buckets`, independent of the sample count).
    for index in range(buckets):
        b0 = start + width * index
        b1 = b0 + width
        stats = (
            SignalSample.objects.filter(signal_id__in=ids, time__gte=b0, time__lt=b1)
            .values("signal_id")
            .annotate(min=Min("value"), avg=Avg("value"), max=Max("value"), n=Count("id"))
        )
        found = {row["signal_id"]: row for row in stats}
        for pk in ids:
            row = found.get(pk)
            series[pk].append(
                {
                    "start": b0.isoformat(),
                    "min": _round(row["min"]) if row else None,
                    "avg": _round(row["avg"]) if row else None,
                    "max": _round(row["max"]) if row else None,
                    "n": row["n"] if row else 0,
                }
            )
    result = []
    for signal in signals:
        points = series[signal.pk]
        maxima = [p["max"] for p in points if p["max"] is not None]
        minima = [p["min"] for p in points if p["min"] is not None]
        result.append(
            {
                "signal_def_id": signal.pk,
                "cell_id": signal.cell_id,
                "key": signal.key,
                "unit": signal.unit,
                "thresholds": thresholds(signal),
                "peak": max(maxima) if maxima else None,
                "low": min(minima) if minima else None,
                "breach": _breach_window(signal, start, end),
                "buckets": points,
            }
        )
    return result


def _breach_window(signal: SignalDefinition, start: datetime, end: datetime) -> dict[str, Any] | None:
    highs = [t for t in (signal.alert, signal.high_alert, signal.trip) if t is not None]
    window = SignalSample.objects.filter(signal=signal, time__gte=start, time__lte=end)
    if highs:
        beyond = window.filter(value__gte=min(highs))
        direction = "high"
    elif signal.low_alert is not None:
        beyond = window.filter(value__lte=signal.low_alert)
        direction = "low"
    else:
        return None
    agg = beyond.aggregate(first=Min("time"), last=Max("time"), n=Count("id"))
    if not agg["n"]:
        return None
    return {
        "direction": direction,
        "first": agg["first"].isoformat(),
        "last": agg["last"].isoformat(),
        "samples": agg["n"],
        "duration_min": round((agg["last"] - agg["first"]).total_seconds() / 60, 1),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def cell_anomalies(cell: Cell, *, limit: int = 20) -> list[dict[str, Any]]:
    alarms = Alarm.objects.filter(signal__cell=cell).select_related("signal").order_by("-raised_at")[:limit]
    return [
        {
            "alarm_id": a.pk,
            "signal_def_id": a.signal_id,
            "key": a.signal.key,
            "state": a.state,
            "severity": a.severity,
            "direction": a.direction,
            "threshold_field": a.threshold_field,
            "threshold": a.threshold_value,
            "value": a.value,
            "peak_value": a.peak_value,
            "raised_at": a.raised_at.isoformat(),
            "cleared_at": a.cleared_at.isoformat() if a.cleared_at else None,
        }
        for a in alarms
    ]


def failure_as_dict(failure: FailureHistory) -> dict[str, Any]:
    return {
        "id": failure.pk,
        "cell_id": failure.cell_id,
        "failure_time": failure.failure_time.isoformat(),
        "resolved_time": failure.resolved_time.isoformat() if failure.resolved_time else None,
        "failure_mode": failure.failure_mode,
        "root_cause": failure.root_cause,
        "signal_patterns": failure.signal_patterns,
        "work_order_id": failure.work_order_id,
    }


def recent_failures(cell: Cell, *, limit: int = 5, confirmed_only: bool = False) -> list[FailureHistory]:
    qs = FailureHistory.objects.filter(cell=cell)
    if confirmed_only:
        qs = qs.filter(resolved_time__isnull=False)
    return list(qs.order_by("-failure_time")[:limit])


def equipment_kb(cell: Cell) -> EquipmentKB | None:
    return EquipmentKB.objects.filter(cell=cell).first()


def work_orders_qs() -> QuerySet[WorkOrder]:
    return WorkOrder.objects.select_related("cell", "triggered_by_signal_def")


def get_work_order(work_order_id: int) -> WorkOrder:
    try:
        return work_orders_qs().get(pk=work_order_id)
    except WorkOrder.DoesNotExist:
        raise NotFound(f"Work order {work_order_id} not found.", field="work_order_id") from None


def work_order_as_dict(wo: WorkOrder, *, full: bool = False) -> dict[str, Any]:
    data = {
        "id": wo.pk,
        "cell_id": wo.cell_id,
        "cell_tag": wo.cell.tag,
        "title": wo.title,
        "status": wo.status,
        "priority": wo.priority,
        "rca_summary": wo.rca_summary,
        "confidence": wo.confidence,
        "created_at": wo.created_at.isoformat(),
        "updated_at": wo.updated_at.isoformat(),
        "triggered_by_alarm_id": wo.triggered_by_alarm_id,
        "triggered_by_signal_def_id": wo.triggered_by_signal_def_id,
    }
    if full:
        data.update(
            {
                "description": wo.description,
                "required_parts": wo.required_parts,
                "required_skills": wo.required_skills,
                "recommended_actions": wo.recommended_actions,
                "rca_details": wo.rca_details,
                "suggested_window_start": _iso(wo.suggested_window_start),
                "suggested_window_end": _iso(wo.suggested_window_end),
                "estimated_duration_min": wo.estimated_duration_min,
                "trigger_anomaly_time": _iso(wo.trigger_anomaly_time),
                "generated_by_agent": wo.generated_by_agent,
            }
        )
    return data


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None
