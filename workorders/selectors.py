"""Reads the capabilities, API and agents share: signals, anomalies, work orders. A value's state
and the trends come from sentinel (sentinel.thresholds.signal_state, sentinel.selectors.trends)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import CharField, Count, OuterRef, QuerySet, Subquery
from django.db.models.functions import Cast

from core.agents.engines.catalog import is_real_provider
from core.errors import NotFound
from core.models import AgentRun
from sentinel.choices import OPEN_ALARM_STATES
from sentinel.models import Alarm, Cell, SignalDefinition, SignalLatest
from sentinel.selectors import alarm_suppressions
from sentinel.thresholds import signal_state, threshold_values
from workorders.agents import investigator
from workorders.choices import CONFIRMED_VERIFICATIONS, FailureCodeLevel, RcaVerdict, WorkOrderStatus
from workorders.models import CompletionReport, EquipmentKB, FailureCode, FailureHistory, WorkOrder, WorkOrderEvent


def get_cell(cell_id: int) -> Cell:
    try:
        return Cell.objects.select_related("line__site").get(pk=cell_id)
    except Cell.DoesNotExist:
        raise NotFound(f"Cell {cell_id} not found.", field="cell_id") from None


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
                "thresholds": threshold_values(signal),
            }
        )
    return rows


# A shelve or out-of-service reason as the alarm tool gives it: on one line (a newline in it must not
# start a section of a report drafted from it) and at most this long (the operator's is up to 500).
SUPPRESSION_REASON_CHARS = 300


def cell_anomalies(cell: Cell, *, limit: int = 20) -> list[dict[str, Any]]:
    """A cell's newest `limit` alarms, and every alarm still open (at most one per signal) however old:
    a shelved or out-of-service alarm raised long ago on a busy cell is still one the next shift must
    hear of. A shelved or out-of-service one carries `suppression`: who took it out of view, when,
    why (`reason`, one line, bounded) and, for a shelve, until when; else None. Newest first. Three
    queries whatever the number of alarms (four when one is suppressed)."""
    ours = Alarm.objects.filter(signal__cell=cell).select_related("signal").order_by("-raised_at")
    newest = list(ours[:limit])
    shown = {a.pk for a in newest}
    older_open = list(ours.filter(state__in=OPEN_ALARM_STATES).exclude(pk__in=shown))
    alarms = sorted(newest + older_open, key=lambda a: a.raised_at, reverse=True)
    suppressions = alarm_suppressions(alarms)
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
            "suppression": _suppression(suppressions.get(a.pk)),
        }
        for a in alarms
    ]


def _suppression(row: dict[str, Any] | None) -> dict[str, Any] | None:
    if row is None:
        return None
    reason = " ".join(str(row["reason"]).split())
    if len(reason) > SUPPRESSION_REASON_CHARS:
        reason = reason[: SUPPRESSION_REASON_CHARS - 1] + "…"
    return {**row, "reason": reason}


def failure_as_dict(failure: FailureHistory) -> dict[str, Any]:
    """`failure_mode`/`root_cause` are the actual ones (a technician's correction wins); the
    proposal stays readable beside them, and `confirmed` says whether a technician verified it."""
    return {
        "id": failure.pk,
        "cell_id": failure.cell_id,
        "failure_time": failure.failure_time.isoformat(),
        "resolved_time": failure.resolved_time.isoformat() if failure.resolved_time else None,
        "failure_mode": failure.actual_failure_mode,
        "root_cause": failure.actual_root_cause,
        "verification": failure.verification,
        "confirmed": failure.is_confirmed,
        "proposed_failure_mode": failure.failure_mode,
        "proposed_root_cause": failure.root_cause,
        "signal_patterns": failure.signal_patterns,
        "work_order_id": failure.work_order_id,
    }


def confirmed_failures_qs() -> QuerySet[FailureHistory]:
    """Failures a technician confirmed or corrected (or recorded history): the agents' evidence."""
    return FailureHistory.objects.filter(verification__in=CONFIRMED_VERIFICATIONS)


def recent_failures(cell: Cell, *, limit: int = 5, confirmed_only: bool = False) -> list[FailureHistory]:
    qs = confirmed_failures_qs() if confirmed_only else FailureHistory.objects.all()
    return list(qs.filter(cell=cell).order_by("-failure_time")[:limit])


def rca_accuracy(*, cell_id: int | None = None) -> dict[str, Any]:
    """How often the technicians confirmed the proposed root cause at completion. An order with no
    RCA (one raised by hand) proposed nothing: its report is not counted."""
    qs = CompletionReport.objects.exclude(work_order__rca_summary="")
    if cell_id is not None:
        qs = qs.filter(work_order__cell_id=cell_id)
    counts = dict(qs.values_list("rca_verdict").annotate(n=Count("id")).values_list("rca_verdict", "n"))
    confirmed, corrected = counts.get(RcaVerdict.CONFIRMED, 0), counts.get(RcaVerdict.CORRECTED, 0)
    total = confirmed + corrected
    return {
        "confirmed": confirmed,
        "corrected": corrected,
        "total": total,
        "accuracy": round(confirmed / total, 4) if total else None,
    }


def failure_codes(equipment_type: str | None = None) -> dict[str, Any]:
    """The code list as class → problems, plus causes and remedies (for one equipment type if given)."""
    rows = list(FailureCode.objects.filter(active=True).order_by("code"))
    classes = [r for r in rows if r.level == FailureCodeLevel.CLASS]
    if equipment_type is not None:
        kind = equipment_type.lower()
        matches = [c for c in classes if c.equipment_type and c.equipment_type.lower() in kind]
        classes = sorted(matches, key=lambda c: -len(c.equipment_type))[:1]

    def entry(code: FailureCode) -> dict[str, Any]:
        data = {"code": code.code, "label": code.label}
        for name in ("failure_mode", "iso_mode", "iso_mechanism", "iso_group", "equipment_type"):
            if getattr(code, name):
                data[name] = getattr(code, name)
        return data

    return {
        "classes": [
            {
                **entry(c),
                "problems": [entry(p) for p in rows if p.level == FailureCodeLevel.PROBLEM and p.parent_id == c.pk],
            }
            for c in classes
        ],
        "causes": [entry(c) for c in rows if c.level == FailureCodeLevel.CAUSE],
        "remedies": [entry(c) for c in rows if c.level == FailureCodeLevel.REMEDY],
    }


def equipment_kb(cell: Cell) -> EquipmentKB | None:
    return EquipmentKB.objects.filter(cell=cell).first()


def work_orders_qs() -> QuerySet[WorkOrder]:
    # The engine of the newest Investigator run on the order (the RCA's engine), in the same query.
    investigator_runs = AgentRun.objects.filter(
        subject_type="work_order", subject_id=Cast(OuterRef("pk"), CharField()), agent=investigator.NAME
    ).order_by("-id")
    return WorkOrder.objects.select_related(
        "cell",
        "triggered_by_signal_def",
        "assigned_shift",
        "raised_by",
        "completion_report__problem",
        "completion_report__cause",
        "completion_report__remedy",
    ).annotate(
        rca_run_engine=Subquery(investigator_runs.values("engine")[:1]),
        hold_note_given=Subquery(_holds().values("details__note")[:1]),
    )


def _holds() -> QuerySet[WorkOrderEvent]:
    """The order's holds, newest first: the note given with the hold is in the event's details."""
    return WorkOrderEvent.objects.filter(work_order=OuterRef("pk"), to_status=WorkOrderStatus.ON_HOLD).order_by("-id")


def hold_note(wo: WorkOrder) -> str:
    """The note given with the order's current hold ("" when not on hold or none given)."""
    if wo.status != WorkOrderStatus.ON_HOLD:
        return ""
    if hasattr(wo, "hold_note_given"):  # work_orders_qs read it in the same query
        return str(wo.hold_note_given or "")
    held = wo.events.filter(to_status=WorkOrderStatus.ON_HOLD).order_by("-id").first()
    return str((held.details or {}).get("note") or "") if held else ""


def rca_engine(wo: WorkOrder) -> dict[str, Any] | None:
    """Which engine wrote the order's RCA ({engine, real_provider}); None for no RCA or a person's."""
    name = getattr(wo, "rca_run_engine", None)
    if not wo.rca_summary or not name or (wo.rca_details or {}).get("manual"):
        return None
    return {"engine": name, "real_provider": is_real_provider(name)}


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
        # Who raised it by hand (workorders.services.manual_intake); null for an alarm's order.
        "raised_by": wo.raised_by.get_username() if wo.raised_by_id and wo.raised_by else None,
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
                "assignment": _assignment(wo),
                "hold_reason": wo.hold_reason,
                "hold_label": wo.get_hold_reason_display() if wo.hold_reason else "",
                "hold_note": hold_note(wo),
                "part_shortages": wo.part_shortages,
                "completion_report": completion_report_as_dict(wo),
                "rca_engine": rca_engine(wo),
            }
        )
    return data


def _assignment(wo: WorkOrder) -> dict[str, Any] | None:
    if not wo.assigned_technician:
        return None
    shift = wo.assigned_shift
    return {
        "technician": wo.assigned_technician,
        "assigned_at": _iso(wo.assigned_at),
        "shift_assignment_id": shift.pk if shift else None,
        "shift": shift.shift if shift else None,
        "date": shift.date.isoformat() if shift else None,
        "starts_at": _iso(shift.starts_at) if shift else None,
        "ends_at": _iso(shift.ends_at) if shift else None,
    }


def completion_report_as_dict(wo: WorkOrder) -> dict[str, Any] | None:
    try:
        report = wo.completion_report
    except CompletionReport.DoesNotExist:
        return None
    return {
        "id": report.pk,
        "work_done": report.work_done,
        "problem": {"code": report.problem.code, "label": report.problem.label},
        "failure_mode": report.problem.failure_mode,
        "cause": {"code": report.cause.code, "label": report.cause.label},
        "remedy": {"code": report.remedy.code, "label": report.remedy.label},
        "actual_root_cause": report.actual_root_cause,
        "rca_verdict": report.rca_verdict,
        "proposed_failure_mode": report.proposed_failure_mode,
        "parts_used": report.parts_used,
        "labour_hours": float(report.labour_hours),
        "technician": report.technician,
        "created_at": report.created_at.isoformat(),
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None
