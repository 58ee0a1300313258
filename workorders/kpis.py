"""OEE, MTBF and MTTR per DOMAIN.md, from production records and failure history."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import Sum
from django.utils import timezone

from sentinel.models import Cell
from workorders.choices import CONFIRMED_VERIFICATIONS
from workorders.models import FailureHistory, ProductionRecord


def _ratio(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def oee(cell: Cell, *, days: int = 30) -> dict[str, Any]:
    """OEE = Availability × Performance × Quality over the cell's production records."""
    since = timezone.localdate() - timedelta(days=days)
    totals = ProductionRecord.objects.filter(cell=cell, date__gte=since).aggregate(
        planned=Sum("planned_time_min"), run=Sum("run_time_min"), total=Sum("total_count"), good=Sum("good_count")
    )
    # Performance needs ideal time per record (cycle times may differ between records).
    ideal_min = sum(
        r.ideal_cycle_time_s * r.total_count / 60
        for r in ProductionRecord.objects.filter(cell=cell, date__gte=since).only("ideal_cycle_time_s", "total_count")
    )
    planned, run = totals["planned"] or 0.0, totals["run"] or 0.0
    total, good = totals["total"] or 0, totals["good"] or 0
    availability = _ratio(run, planned)
    performance = _ratio(ideal_min, run)
    quality = _ratio(good, total)
    value = None
    if None not in (availability, performance, quality):
        value = round(availability * performance * quality, 4)
    return {
        "cell_id": cell.pk,
        "days": days,
        "oee": value,
        "availability": availability,
        "performance": performance,
        "quality": quality,
        "planned_time_min": planned,
        "run_time_min": run,
        "total_count": total,
        "good_count": good,
    }


def _failures(cell: Cell, days: int):
    """Confirmed failures only: an RCA nobody verified may not have been a failure at all."""
    since = timezone.now() - timedelta(days=days)
    return list(
        FailureHistory.objects.filter(cell=cell, failure_time__gte=since, verification__in=CONFIRMED_VERIFICATIONS)
    )


def mtbf(cell: Cell, *, days: int = 90) -> dict[str, Any]:
    """MTBF = operating time ÷ confirmed failures, operating time = the period minus repair downtime."""
    failures = _failures(cell, days)
    period_h = days * 24.0
    downtime_h = sum((f.repair_minutes or 0.0) / 60 for f in failures)
    operating_h = max(period_h - downtime_h, 0.0)
    return {
        "cell_id": cell.pk,
        "days": days,
        "failures": len(failures),
        "operating_hours": round(operating_h, 2),
        "mtbf_hours": round(operating_h / len(failures), 2) if failures else None,
    }


def mttr(cell: Cell, *, days: int = 90) -> dict[str, Any]:
    """MTTR = total repair time ÷ number of confirmed repairs (confirmed failures with a resolved time)."""
    repaired = [f for f in _failures(cell, days) if f.resolved_time is not None]
    repair_h = sum(f.repair_minutes / 60 for f in repaired)
    return {
        "cell_id": cell.pk,
        "days": days,
        "repairs": len(repaired),
        "repair_hours": round(repair_h, 2),
        "mttr_hours": round(repair_h / len(repaired), 2) if repaired else None,
    }
