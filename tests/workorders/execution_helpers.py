"""Builders for the work-execution tests: a P-02 order the Investigator analysed (a proposed
cause in the failure history), its repair order written, and a roster row covering its window."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from tests.workorders import factories as f
from workorders.failure_codes import seed_failure_codes
from workorders.models import FailureCode, ShiftAssignment, WorkOrder
from workorders.services import work_order_apply_generated, work_order_apply_rca

BEARING = "PUMP.bearing_wear"
CAVITATION = "PUMP.cavitation"


def report(**overrides) -> dict:
    """A completion report that confirms a bearing_wear RCA."""
    body = {
        "work_done": "Replaced the drive-end bearing, regreased, laser-aligned, 30 min test run at 2.0 mm/s.",
        "problem_code": BEARING,
        "cause_code": "OM-LUBRICATION",
        "remedy_code": "RPL",
        "rca_verdict": "confirmed",
        "actual_root_cause": "",
        "parts_used": [{"ref": "SKF-6310-2Z-C3", "qty": 1}],
        "labour_hours": 3.5,
    }
    body.update(overrides)
    return body


def analysed_order(cell, *, mode: str = "bearing_wear", parts: list | None = None) -> WorkOrder:
    """An order with a proposed RCA (`mode`) and a generated repair order (status open)."""
    seed_failure_codes(FailureCode)
    if not hasattr(cell, "kb"):
        f.make_kb(cell)
    wo = f.make_work_order(cell, trigger_anomaly_time=timezone.now() - timedelta(hours=1))
    rca = {
        "root_cause": f"{mode}: pattern matches an earlier {mode}.",
        "confidence": 0.8,
        "failure_mode": mode,
        "signal_patterns": {"vibration_mm_s": {"peak": 5.0, "duration_min": 12}},
    }
    work_order_apply_rca(work_order=wo, rca=rca, agent="investigator", actor=None)
    start = timezone.now() + timedelta(minutes=30)
    order = {
        "title": f"{mode} on {cell.tag}",
        "description": "d",
        "recommended_actions": ["Isolate (LOTO)", "Replace the bearing"],
        "required_parts": parts if parts is not None else [{"ref": "SKF-6310-2Z-C3", "qty": 1}],
        "required_skills": ["mechanical"],
        "priority": "high",
        "estimated_duration_min": 120,
        "suggested_window_start": start,
        "suggested_window_end": start + timedelta(hours=2),
    }
    work_order_apply_generated(work_order=wo, order=order, agent="work_order_generator", actor=None)
    wo.refresh_from_db()
    return wo


def shift_covering(wo: WorkOrder, technician: str = "Marta Silva", *, hours_off: int = 0) -> ShiftAssignment:
    start = wo.suggested_window_start - timedelta(hours=1) + timedelta(hours=hours_off)
    return ShiftAssignment.objects.create(
        date=start.date(),
        # A shift hours off the window is another shift: the same name on the same date would be
        # the same row (unique date, shift, technician) whenever the offset stays within the day.
        shift="morning" if hours_off == 0 else "night",
        line=wo.cell.line,
        technician=technician,
        role="mechanical technician",
        skills=["mechanical", "vibration_analysis"],
        starts_at=start,
        ends_at=start + timedelta(hours=8),
    )
