"""Small builders for workorders tests: a P-02 pump with signals, samples, alarms, KB and history."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from sentinel.models import Alarm, Cell, Line, SignalDefinition, SignalLatest, SignalSample, Site
from workorders.models import EquipmentKB, FailureHistory, WorkOrder

P02_KB = {
    "equipment": {"type": "centrifugal pump", "rated_speed_rpm": 2950},
    "failure_modes": {
        "bearing_wear": {
            "signals": ["vibration_mm_s", "bearing_temp_c"],
            "signatures": ["vibration rising over hours to days", "bearing temperature up"],
            "remedy": "Replace the drive-end bearing and check lubrication.",
            "procedure": "PR-BRG-01",
            "parts": [{"ref": "SKF-6310-2Z-C3", "qty": 1}, {"ref": "GREASE-LGHP2", "qty": 1}],
            "skills": ["mechanical", "vibration_analysis"],
            "duration_min": 240,
        },
        "cavitation": {
            "signals": ["suction_pressure_bar", "flow_m3h"],
            "signatures": ["suction pressure low", "flow unstable"],
            "remedy": "Restore suction head; clean the strainer.",
            "procedure": "PR-CAV-01",
            "parts": [{"ref": "STRAINER-DN100", "qty": 1}],
            "skills": ["mechanical"],
            "duration_min": 90,
        },
    },
    "spare_parts": [
        {"ref": "SKF-6310-2Z-C3", "name": "DE bearing", "on_hand": 2},
        {"ref": "GREASE-LGHP2", "name": "Bearing grease", "on_hand": 5},
        {"ref": "STRAINER-DN100", "name": "Suction strainer", "on_hand": 1},
    ],
    "procedures": {
        "PR-BRG-01": {
            "title": "Replace pump bearings",
            "steps": ["Isolate and lock out the pump", "Remove coupling guard", "Replace DE bearing", "Test run"],
        },
        "PR-CAV-01": {"title": "Clear suction strainer", "steps": ["Isolate", "Clean strainer", "Restart"]},
    },
}


def make_cell(tag: str = "P-02", **signal_kw) -> Cell:
    site, _ = Site.objects.get_or_create(name="Test Plant")
    line, _ = Line.objects.get_or_create(site=site, name="Line 1")
    cell, _ = Cell.objects.get_or_create(
        tag=tag, defaults={"line": line, "name": f"Pump {tag}", "equipment_type": "pump", "onboarding_complete": True}
    )
    return cell


def make_signal(cell: Cell, key: str = "vibration_mm_s", **kw) -> SignalDefinition:
    defaults = {"display_name": "Vibration", "unit": "mm/s", "alert": 4.5, "trip": 7.1, "deadband": 0.2}
    defaults.update(kw)
    signal, _ = SignalDefinition.objects.get_or_create(cell=cell, key=key, defaults=defaults)
    return signal


def ramp(signal: SignalDefinition, *, minutes: int = 60, start: float = 2.0, peak: float = 5.0, breach_min: int = 12):
    """One sample a minute ending now: flat, then a rise to `peak` held for `breach_min` minutes."""
    now = timezone.now()
    samples = []
    for i in range(minutes):
        t = now - timedelta(minutes=minutes - i - 1)
        left = minutes - i - 1
        value = peak if left < breach_min else start + (peak - start) * max(0, i - (minutes - 30)) / 30
        samples.append(SignalSample(signal=signal, time=t, value=round(value, 3)))
    SignalSample.objects.bulk_create(samples)
    SignalLatest.objects.update_or_create(signal=signal, defaults={"time": now, "value": samples[-1].value})
    return samples


def make_alarm(
    signal: SignalDefinition, *, value: float = 5.0, severity: str = "alert", raised_at: datetime | None = None
) -> Alarm:
    threshold = signal.trip if severity == "trip" else signal.alert
    return Alarm.objects.create(
        signal=signal,
        severity=severity,
        direction="high",
        threshold_field="trip" if severity == "trip" else "alert",
        threshold_value=threshold,
        value=value,
        peak_value=value,
        raised_at=raised_at or timezone.now(),
    )


def make_kb(cell: Cell, data: dict | None = None) -> EquipmentKB:
    kb, _ = EquipmentKB.objects.update_or_create(cell=cell, defaults={"data": data if data is not None else P02_KB})
    return kb


def make_history(cell: Cell) -> list[FailureHistory]:
    now = timezone.now()
    rows = [
        (
            "bearing_wear",
            60,
            {"vibration_mm_s": {"peak": 5.4, "duration_min": 14}},
            "DE bearing worn; grease degraded.",
        ),
        ("cavitation", 30, {"suction_pressure_bar": {"peak": 0.4, "duration_min": 25}}, "Clogged suction strainer."),
        (
            "misalignment",
            80,
            {"vibration_mm_s": {"peak": 8.9, "duration_min": 3}},
            "Coupling misaligned after service.",
        ),
    ]
    return [
        FailureHistory.objects.create(
            cell=cell,
            failure_time=now - timedelta(days=days),
            resolved_time=now - timedelta(days=days) + timedelta(hours=4),
            failure_mode=mode,
            root_cause=cause,
            signal_patterns=patterns,
            verification="confirmed",  # the plant's recorded history, not an RCA proposal
        )
        for mode, days, patterns, cause in rows
    ]


def make_work_order(cell: Cell, **kw) -> WorkOrder:
    return WorkOrder.objects.create(cell=cell, title=kw.pop("title", "Test order"), **kw)


def work_order_change_form(wo: WorkOrder, **overrides: str) -> dict[str, str]:
    """The admin's change form for `wo` as a browser posts it, with `overrides`."""
    data = {
        "title": wo.title,
        "description": wo.description,
        "priority": wo.priority,
        "required_parts": "[]",
        "required_skills": "[]",
        "recommended_actions": "[]",
        "suggested_window_start_0": "2026-12-01",
        "suggested_window_start_1": "14:00:00",
        "suggested_window_end_0": "2026-12-01",
        "suggested_window_end_1": "18:00:00",
        "estimated_duration_min": "240",
        "events-TOTAL_FORMS": "0",
        "events-INITIAL_FORMS": "0",
        "events-MIN_NUM_FORMS": "0",
        "events-MAX_NUM_FORMS": "1000",
    }
    return data | overrides
