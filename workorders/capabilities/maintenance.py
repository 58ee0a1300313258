"""Capabilities over work orders, failure history, the equipment KB, logbook, shifts and KPIs."""

from datetime import date as Date
from datetime import datetime, timedelta
from typing import Any, Literal

from django.db.models import Q
from django.utils import timezone
from pydantic import BaseModel, Field, StrictBool

from core.access import OPERATOR
from core.capabilities import CapabilityContext, Tier, capability
from core.errors import InvalidInput
from core.timewindows import parse_time_window
from sentinel.models import Cell
from workorders import kpis, selectors
from workorders.choices import Priority, WorkOrderStatus
from workorders.models import LogbookEntry, ShiftAssignment
from workorders.services import equipment_kb_update, work_order_update
from workorders.services.edits import MAX_DESCRIPTION_CHARS
from workorders.shapes import PartRef

StatusName = Literal["detected", "analyzed", "open", "in_progress", "on_hold", "completed", "cancelled"]
PriorityName = Literal["low", "medium", "high", "critical"]
assert set(StatusName.__args__) == set(WorkOrderStatus.values)
assert set(PriorityName.__args__) == set(Priority.values)


class CellInput(BaseModel):
    cell_id: int


class LimitedCellInput(BaseModel):
    cell_id: int
    limit: int = Field(default=10, ge=1, le=100)


class FailureHistoryInput(LimitedCellInput):
    confirmed_only: StrictBool = Field(
        default=False,
        description="Only confirmed failures (resolved_time set); other rows are earlier RCAs not yet confirmed.",
    )


class LogbookInput(BaseModel):
    cell_id: int
    days: int = Field(default=30, ge=1, le=365)
    limit: int = Field(default=20, ge=1, le=100)


class ShiftsInput(BaseModel):
    date: Date | None = Field(default=None, description="ISO date (YYYY-MM-DD); default today.")
    days: int = Field(default=2, ge=1, le=14)
    cell_id: int | None = Field(default=None, description="Only the cell's line.")


class WorkOrdersInput(BaseModel):
    cell_id: int | None = None
    status: StatusName | None = None
    priority: PriorityName | None = None
    limit: int = Field(default=20, ge=1, le=100)


class WorkOrderInput(BaseModel):
    work_order_id: int


class UpdateWorkOrderInput(BaseModel):
    work_order_id: int
    title: str | None = Field(default=None, max_length=200)
    description: str | None = Field(default=None, max_length=MAX_DESCRIPTION_CHARS)
    priority: PriorityName | None = None
    recommended_actions: list[str] | None = None
    required_parts: list[PartRef] | None = None
    required_skills: list[str] | None = None
    estimated_duration_min: int | None = Field(default=None, ge=1, le=100_000)
    suggested_window_start: datetime | None = None
    suggested_window_end: datetime | None = None
    to_status: StatusName | None = Field(default=None, description="Optional transition (lifecycle map enforced).")
    rca_summary: str | None = Field(
        default=None, max_length=4000, description="Required with to_status=analyzed: the root cause found."
    )
    confidence: float | None = Field(default=None, ge=0.0, le=1.0, description="Of that root cause; default 1.0.")
    note: str = Field(default="", max_length=500)


class KbPatchInput(BaseModel):
    cell_id: int
    patch: dict[str, Any] = Field(description="JSON merge-patch: objects merge, null deletes a key.")
    note: str = Field(default="", max_length=500)


class KpiInput(BaseModel):
    cell_id: int | None = Field(default=None, description="One cell; omit to rank every cell, worst first.")
    days: int = Field(default=90, ge=1, le=3650, description="Last N days, when neither period nor since is given.")
    period: str | None = Field(
        default=None,
        max_length=100,
        description="The period in words: 'this month', 'last 30 days', 'since Monday', 'yesterday'.",
    )
    since: datetime | None = Field(default=None, description="Start of the period (ISO datetime); ends now.")

    def window(self) -> tuple[datetime, datetime, str]:
        """[start, end) and its label: since, else the period in words, else the last `days` days."""
        now = timezone.now()
        if self.since is not None:
            since = self.since if timezone.is_aware(self.since) else timezone.make_aware(self.since)
            if since >= now:
                raise InvalidInput("since must be in the past.", field="since")
            return since, now, f"since {since.isoformat()}"
        if self.period:
            window = parse_time_window(self.period, now=now)
            if window is None:
                raise InvalidInput(
                    f"Unknown period {self.period!r}: say e.g. 'this month', 'last 30 days', 'since Monday'.",
                    field="period",
                )
            return window.start, window.end, window.label
        return now - timedelta(days=self.days), now, f"last {self.days} days"


def _read(name: str, description: str, input: type[BaseModel]):
    return capability(f"workorders.{name}", description=description, input=input, tier=Tier.READ, scopes=(OPERATOR,))


@_read(
    "get_equipment_kb",
    "The cell's equipment knowledge base (specs, failure modes, spare parts, procedures).",
    CellInput,
)
def get_equipment_kb(ctx: CapabilityContext, params: CellInput) -> dict[str, Any]:
    cell = selectors.get_cell(params.cell_id)
    kb = selectors.equipment_kb(cell)
    data = kb.data if kb else {}
    return {
        "cell_id": cell.pk,
        "cell_tag": cell.tag,
        "data": data,
        "calibration_log": (kb.calibration_log[-5:] if kb else []),
        "summary": f"KB of {cell.tag}: {', '.join(sorted(data)) or 'empty'}",
    }


@capability(
    "workorders.update_equipment_kb",
    description="Merge-patch the cell's KB (null deletes a key); the change is logged and audited.",
    input=KbPatchInput,
    tier=Tier.MUTATE,
    scopes=(OPERATOR,),
)
def update_equipment_kb(ctx: CapabilityContext, params: KbPatchInput) -> dict[str, Any]:
    cell = selectors.get_cell(params.cell_id)
    kb = equipment_kb_update(cell=cell, patch=params.patch, actor=ctx.user, note=params.note)
    return {
        "cell_id": cell.pk,
        "data": kb.data,
        "summary": f"KB of {cell.tag} updated: {kb.calibration_log[-1]['changed']}",
    }


@_read(
    "get_failure_history",
    "Past failures of a cell, newest first, with failure mode, root cause and signal patterns.",
    FailureHistoryInput,
)
def get_failure_history(ctx: CapabilityContext, params: FailureHistoryInput) -> dict[str, Any]:
    cell = selectors.get_cell(params.cell_id)
    rows = selectors.recent_failures(cell, limit=params.limit, confirmed_only=params.confirmed_only)
    failures = [selectors.failure_as_dict(f) for f in rows]
    kind = "confirmed " if params.confirmed_only else ""
    return {"cell_id": cell.pk, "failures": failures, "summary": f"{len(failures)} {kind}past failure(s) of {cell.tag}"}


@_read("get_logbook_entries", "Operator and technician logbook entries about a cell, newest first.", LogbookInput)
def get_logbook_entries(ctx: CapabilityContext, params: LogbookInput) -> dict[str, Any]:
    cell = selectors.get_cell(params.cell_id)
    since = timezone.now() - timedelta(days=params.days)
    entries = LogbookEntry.objects.filter(cell=cell, time__gte=since).order_by("-time")[: params.limit]
    rows = [
        {"time": e.time.isoformat(), "author": e.author, "shift": e.shift, "category": e.category, "text": e.text}
        for e in entries
    ]
    return {"cell_id": cell.pk, "entries": rows, "summary": f"{len(rows)} logbook entr(ies) for {cell.tag}"}


@_read("get_shift_assignments", "Who is on which shift (technicians, roles, skills) from a date on.", ShiftsInput)
def get_shift_assignments(ctx: CapabilityContext, params: ShiftsInput) -> dict[str, Any]:
    start = params.date or timezone.localdate()
    qs = ShiftAssignment.objects.filter(date__gte=start, date__lt=start + timedelta(days=params.days))
    cell_id = None
    if params.cell_id is not None:
        cell = selectors.get_cell(params.cell_id)
        cell_id = cell.pk
        qs = qs.filter(Q(line_id=cell.line_id) | Q(line__isnull=True))
    rows = [
        {
            "date": a.date.isoformat(),
            "shift": a.shift,
            "technician": a.technician,
            "role": a.role,
            "skills": a.skills,
            "starts_at": a.starts_at.isoformat(),
            "ends_at": a.ends_at.isoformat(),
        }
        for a in qs.order_by("date", "starts_at", "technician")
    ]
    return {"cell_id": cell_id, "assignments": rows, "summary": f"{len(rows)} shift assignment(s) from {start}"}


@_read("get_work_orders", "Work orders, newest first, filtered by cell, status, priority.", WorkOrdersInput)
def get_work_orders(ctx: CapabilityContext, params: WorkOrdersInput) -> dict[str, Any]:
    qs = selectors.work_orders_qs()
    if params.cell_id is not None:
        qs = qs.filter(cell_id=params.cell_id)
    if params.status:
        qs = qs.filter(status=params.status)
    if params.priority:
        qs = qs.filter(priority=params.priority)
    rows = [selectors.work_order_as_dict(wo) for wo in qs[: params.limit]]
    return {"cell_id": params.cell_id, "work_orders": rows, "summary": f"{len(rows)} work order(s)"}


@_read("get_work_order", "One work order with its RCA, repair plan and transition history.", WorkOrderInput)
def get_work_order(ctx: CapabilityContext, params: WorkOrderInput) -> dict[str, Any]:
    wo = selectors.get_work_order(params.work_order_id)
    data = selectors.work_order_as_dict(wo, full=True)
    data["events"] = [
        {"from": e.from_status, "to": e.to_status, "time": e.created_at.isoformat(), "note": e.note}
        for e in wo.events.all()
    ]
    data["summary"] = f"WO-{wo.pk} {wo.status} {wo.priority}: {wo.title}"[:200]
    return data


@capability(
    "workorders.update_work_order",
    description="Edit a work order's plan (title, actions, parts, skills, priority, window) and/or move its status.",
    input=UpdateWorkOrderInput,
    tier=Tier.MUTATE,
    scopes=(OPERATOR,),
)
def update_work_order(ctx: CapabilityContext, params: UpdateWorkOrderInput) -> dict[str, Any]:
    wo = selectors.get_work_order(params.work_order_id)
    changes = params.model_dump(
        mode="json", exclude_unset=True, exclude={"work_order_id", "to_status", "note", "rca_summary", "confidence"}
    )
    for name in ("suggested_window_start", "suggested_window_end"):
        if getattr(params, name) is not None:
            changes[name] = getattr(params, name)
    wo = work_order_update(
        work_order=wo,
        actor=ctx.user,
        changes=changes,
        to_status=params.to_status,
        note=params.note,
        rca_summary=params.rca_summary,
        confidence=params.confidence,
    )
    data = selectors.work_order_as_dict(wo, full=True)
    data["summary"] = f"WO-{wo.pk} updated ({', '.join(sorted(changes)) or 'status'}) → {wo.status}"
    return data


def _kpi(kpi: kpis.KpiName, params: KpiInput) -> dict[str, Any]:
    start, end, label = params.window()
    field, _ = kpis.KPI_VALUE[kpi]
    if params.cell_id is not None:
        result = kpis.KPI_FUNCTIONS[kpi](selectors.get_cell(params.cell_id), start=start, end=end)
        result["period"] = label
        result["summary"] = f"{kpi.upper()} of {result['cell_tag']} ({label}): {result[field]}"
        return result
    ranked = kpis.ranking(kpi, Cell.objects.all(), start=start, end=end)
    worst = next((row for row in ranked if row[field] is not None), None)
    summary = (
        f"Worst {kpi.upper()} ({label}): {worst['cell_tag']} with {worst[field]}"
        if worst
        else f"No cell has a {kpi.upper()} value ({label})."
    )
    return {
        "kpi": kpi,
        "period": label,
        "start": start.isoformat(),
        "end": end.isoformat(),
        "ranking": ranked,
        "worst": worst,
        "summary": summary,
    }


_KPI_SCOPE = "of a cell, or every cell ranked worst first (no cell_id), over a period (words, since, or last N days)."


@_read("get_oee", f"OEE = availability × performance × quality {_KPI_SCOPE}", KpiInput)
def get_oee(ctx: CapabilityContext, params: KpiInput) -> dict[str, Any]:
    return _kpi("oee", params)


@_read("get_mtbf", f"Mean time between confirmed failures (hours) {_KPI_SCOPE}", KpiInput)
def get_mtbf(ctx: CapabilityContext, params: KpiInput) -> dict[str, Any]:
    return _kpi("mtbf", params)


@_read("get_mttr", f"Mean time to repair (hours) {_KPI_SCOPE}", KpiInput)
def get_mttr(ctx: CapabilityContext, params: KpiInput) -> dict[str, Any]:
    return _kpi("mttr", params)
