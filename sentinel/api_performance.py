"""Alarm performance (ISA-18.2 / EEMUA 191) at /api/v1/alarm-performance: operators and approvers
read it (the report is sentinel.performance's; tuning suggestions carry a plan goal for /aria/plans)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Schema
from pydantic import Field

from core.access import APPROVER, OPERATOR, require_any_scope
from core.json_types import RowId
from sentinel.performance import MAX_WINDOW, alarm_performance, performance_window

router = Router(tags=["sentinel"])


class PerformanceQuery(Schema):
    start: datetime | None = Field(None, description="Window start (ISO 8601; naive = UTC). Default: end − hours.")
    end: datetime | None = Field(None, description="Window end (default now; not in the future).")
    hours: float | None = Field(
        None, gt=0, le=MAX_WINDOW.total_seconds() / 3600, description="Window length when no start (default 24)."
    )
    line_id: RowId | None = Field(None, description="The operator position: one line (default: the site).")


@router.get("/alarm-performance")
def alarm_performance_report(request: HttpRequest, params: Query[PerformanceQuery]) -> dict[str, Any]:
    """Alarm rate per 10 min against the targets, floods, top 10 bad actors with tuning suggestions,
    chattering, fleeting, standing/stale, shelved and out-of-service alarms, priority mix."""
    require_any_scope(request.user, OPERATOR, APPROVER)
    window = performance_window(start=params.start, end=params.end, hours=params.hours, line_id=params.line_id)
    return alarm_performance(window)
