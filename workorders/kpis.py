"""OEE, MTBF and MTTR per DOMAIN.md, from production records and failure history.

Each KPI covers the last `days` days ending now, or an explicit [start, end) window (a calendar
month, "since Monday"); `ranking` orders every cell by one KPI, worst first.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, Literal

from django.db.models import Sum
from django.utils import timezone

from sentinel.models import Cell
from workorders.choices import CONFIRMED_VERIFICATIONS
from workorders.models import FailureHistory, ProductionRecord


def _ratio(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def _window(days: int, start: datetime | None, end: datetime | None) -> tuple[datetime, datetime]:
    end = end or timezone.now()
    return (start or end - timedelta(days=days)), end


def _period(start: datetime, end: datetime) -> dict[str, Any]:
    return {
        "days": max(1, round((end - start).total_seconds() / 86400)),
        "start": start.isoformat(),
        "end": end.isoformat(),
    }


def oee(cell: Cell, *, days: int = 30, start: datetime | None = None, end: datetime | None = None) -> dict[str, Any]:
    """OEE = Availability × Performance × Quality over the cell's production records."""
    start, end = _window(days, start, end)
    since = timezone.localdate(start) if timezone.is_aware(start) else start.date()
    until = timezone.localdate(end) if timezone.is_aware(end) else end.date()
    records = ProductionRecord.objects.filter(cell=cell, date__gte=since, date__lte=until)
    totals = records.aggregate(
        planned=Sum("planned_time_min"), run=Sum("run_time_min"), total=Sum("total_count"), good=Sum("good_count")
    )
    # Performance needs ideal time per record (cycle times may differ between records).
    ideal_min = sum(
        r.ideal_cycle_time_s * r.total_count / 60 for r in records.only("ideal_cycle_time_s", "total_count")
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
        "cell_tag": cell.tag,
        **_period(start, end),
        "oee": value,
        "availability": availability,
        "performance": performance,
        "quality": quality,
        "planned_time_min": planned,
        "run_time_min": run,
        "total_count": total,
        "good_count": good,
    }


def _failures(cell: Cell, start: datetime, end: datetime) -> list[FailureHistory]:
    """Confirmed failures only: an RCA nobody verified may not have been a failure at all."""
    return list(
        FailureHistory.objects.filter(
            cell=cell, failure_time__gte=start, failure_time__lt=end, verification__in=CONFIRMED_VERIFICATIONS
        )
    )


def mtbf(cell: Cell, *, days: int = 90, start: datetime | None = None, end: datetime | None = None) -> dict[str, Any]:
    """MTBF = operating time ÷ confirmed failures, operating time = the period minus repair downtime."""
    start, end = _window(days, start, end)
    failures = _failures(cell, start, end)
    period_h = (end - start).total_seconds() / 3600
    downtime_h = sum((f.repair_minutes or 0.0) / 60 for f in failures)
    operating_h = max(period_h - downtime_h, 0.0)
    return {
        "cell_id": cell.pk,
        "cell_tag": cell.tag,
        **_period(start, end),
        "failures": len(failures),
        "operating_hours": round(operating_h, 2),
        "mtbf_hours": round(operating_h / len(failures), 2) if failures else None,
    }


def mttr(cell: Cell, *, days: int = 90, start: datetime | None = None, end: datetime | None = None) -> dict[str, Any]:
    """MTTR = total repair time ÷ number of confirmed repairs (confirmed failures with a resolved time)."""
    start, end = _window(days, start, end)
    repaired = [f for f in _failures(cell, start, end) if f.resolved_time is not None]
    repair_h = sum(f.repair_minutes / 60 for f in repaired)
    return {
        "cell_id": cell.pk,
        "cell_tag": cell.tag,
        **_period(start, end),
        "repairs": len(repaired),
        "repair_hours": round(repair_h, 2),
        "mttr_hours": round(repair_h / len(repaired), 2) if repaired else None,
    }


KpiName = Literal["oee", "mtbf", "mttr"]
# The field holding each KPI's value and whether a higher value is worse.
KPI_VALUE: dict[str, tuple[str, bool]] = {
    "oee": ("oee", False),
    "mtbf": ("mtbf_hours", False),
    "mttr": ("mttr_hours", True),
}
KPI_FUNCTIONS = {"oee": oee, "mtbf": mtbf, "mttr": mttr}


def ranking(kpi: KpiName, cells: Iterable[Cell], *, start: datetime, end: datetime) -> list[dict[str, Any]]:
    """Every cell's KPI over the window, worst first; cells without a value (no failures, no
    production records) come last, in tag order."""
    field, higher_is_worse = KPI_VALUE[kpi]
    rows = [KPI_FUNCTIONS[kpi](cell, start=start, end=end) for cell in sorted(cells, key=lambda c: c.tag)]
    valued = [r for r in rows if r[field] is not None]
    valued.sort(key=lambda r: -r[field] if higher_is_worse else r[field])
    ranked = valued + [r for r in rows if r[field] is None]
    for rank, row in enumerate(ranked, start=1):
        row["rank"] = rank
    return ranked
