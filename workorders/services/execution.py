"""Work execution by people: assign from the shift roster, start, hold, cancel, and complete with a
report that confirms or corrects the proposed root cause.

Every move goes through the lifecycle service (`transition_locked`: map check, event row, audit,
`work_order_updated` on the bus). Lock order (docs/KERNEL.md): the alarms shelved until the order
closes, then the order, then the KB row whose stock a completion takes parts from.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from core.access import OPERATOR, require_scopes
from core.audit import audit_record
from core.errors import Conflict, InvalidInput
from workorders.choices import (
    ACTIVE_STATUSES,
    ASSIGNABLE_STATUSES,
    FailureCodeLevel,
    FailureVerification,
    HoldReason,
    RcaVerdict,
    WorkOrderStatus,
)
from workorders.events import work_order_updated_in_place
from workorders.models import CompletionReport, FailureCode, FailureHistory, ShiftAssignment, WorkOrder, WorkOrderEvent
from workorders.services.lifecycle import (
    WORK_ORDER_MACHINE,
    _lock_alarms_waiting_on,
    actor_name,
    failure_mode_from_rca,
    illegal_message,
    lock_work_order,
    transition_locked,
)
from workorders.services.parts import parts_take_from_stock

S = WorkOrderStatus
MAX_LABOUR_HOURS = Decimal("1000")


def _require_illegal_check(work_order: WorkOrder, to_status: str) -> None:
    """The lifecycle's 409 before any execution write (the transition checks again, under the lock)."""
    WORK_ORDER_MACHINE.check(work_order.status, to_status, message=illegal_message(work_order, to_status))


def work_window(work_order: WorkOrder, *, now: datetime | None = None) -> tuple[datetime, datetime]:
    """The order's suggested window, else from now for its estimated duration (1 h by default)."""
    if work_order.suggested_window_start and work_order.suggested_window_end:
        return work_order.suggested_window_start, work_order.suggested_window_end
    start = work_order.suggested_window_start or now or timezone.now()
    return start, start + timedelta(minutes=work_order.estimated_duration_min or 60)


def assignment_conflicts(work_order: WorkOrder, shift: ShiftAssignment) -> list[dict[str, Any]]:
    """Warnings for assigning `shift`'s technician: off shift in the order's window, already
    assigned to an overlapping active order, missing a required skill, on another line."""
    start, end = work_window(work_order)
    conflicts: list[dict[str, Any]] = []
    if shift.ends_at <= start or shift.starts_at >= end:
        conflicts.append(
            {
                "code": "off_shift",
                "message": f"{shift.technician} is not on shift in the work window "
                f"({start:%Y-%m-%d %H:%M}–{end:%H:%M}); the {shift.shift} shift runs "
                f"{shift.starts_at:%Y-%m-%d %H:%M}–{shift.ends_at:%H:%M}.",
            }
        )
    elif shift.starts_at > start or shift.ends_at < end:
        conflicts.append(
            {"code": "partly_off_shift", "message": f"The work window runs beyond {shift.technician}'s shift."}
        )
    others = (
        WorkOrder.objects.filter(assigned_technician=shift.technician, status__in=ACTIVE_STATUSES)
        .exclude(pk=work_order.pk)
        .only("pk", "suggested_window_start", "suggested_window_end", "estimated_duration_min", "created_at")
    )
    for other in others:
        o_start, o_end = work_window(other)
        if o_start < end and start < o_end:
            conflicts.append(
                {
                    "code": "double_booked",
                    "message": f"{shift.technician} is already assigned to work order #{other.pk} "
                    f"({o_start:%Y-%m-%d %H:%M}–{o_end:%H:%M}), which overlaps.",
                    "work_order_id": other.pk,
                }
            )
    missing = sorted(set(work_order.required_skills or []) - set(shift.skills or []))
    if missing:
        conflicts.append(
            {"code": "missing_skills", "message": f"{shift.technician} lacks: {', '.join(missing)}.", "skills": missing}
        )
    if shift.line_id is not None and shift.line_id != work_order.cell.line_id:
        conflicts.append({"code": "other_line", "message": f"{shift.technician} is rostered on another line."})
    return conflicts


def work_order_assign(
    *, work_order: WorkOrder | int, shift_assignment: ShiftAssignment | int, actor: AbstractBaseUser | None
) -> tuple[WorkOrder, list[dict[str, Any]]]:
    """Assign the order to a technician on a shift of the roster; returns the conflict warnings
    (recorded with the assignment, never blocking it: the planner decides).

    A shift that has already ended is refused (422 `shift_ended` naming `shift_assignment_id`,
    nothing written): nobody on it can do the work, and the roster offers only shifts still to come
    or under way. There is no recording of past work through an assignment (a completion report
    names the assigned technician; history is imported as failure records, not orders)."""
    require_scopes(actor, OPERATOR)
    shift_pk = shift_assignment.pk if isinstance(shift_assignment, ShiftAssignment) else shift_assignment
    shift = ShiftAssignment.objects.filter(pk=shift_pk).first()
    if shift is None:
        raise InvalidInput(f"Shift assignment {shift_pk} not found.", field="shift_assignment_id")
    if shift.ends_at <= timezone.now():
        ended = timezone.localtime(shift.ends_at)
        raise InvalidInput(
            f"shift_assignment_id: {shift.technician}'s {shift.shift} shift of {shift.date:%Y-%m-%d} ended at "
            f"{ended:%Y-%m-%d %H:%M}; assign a shift that has not ended.",
            field="shift_assignment_id",
            code="shift_ended",
        )
    with transaction.atomic():
        locked = lock_work_order(work_order)
        if locked.status not in ASSIGNABLE_STATUSES:
            raise Conflict(
                f"Work order {locked.pk} is {locked.status}: only {', '.join(ASSIGNABLE_STATUSES)} orders are assigned.",
                field="status",
                code="not_assignable",
            )
        conflicts = assignment_conflicts(locked, shift)
        before = locked.assigned_technician
        locked.assigned_shift = shift
        locked.assigned_technician = shift.technician
        locked.assigned_at = timezone.now()
        locked.save(update_fields=["assigned_shift", "assigned_technician", "assigned_at", "updated_at"])
        details = {
            "assigned_technician": shift.technician,
            "shift_assignment_id": shift.pk,
            "shift": shift.shift,
            "date": shift.date.isoformat(),
            "previous": before,
            "conflicts": [c["code"] for c in conflicts],
        }
        WorkOrderEvent.objects.create(
            work_order=locked,
            from_status=locked.status,
            to_status=locked.status,
            actor=actor,
            note=f"Assigned to {shift.technician} ({shift.shift} shift {shift.date:%Y-%m-%d})"[:500],
            details=details,
        )
        audit_record(
            actor=actor, action="work_order.assign", target_type="work_order", target_id=locked.pk, details=details
        )
        work_order_updated_in_place(locked.pk, locked.status, "assigned", actor_name(actor))
    return locked, conflicts


def work_order_start(*, work_order: WorkOrder | int, actor: AbstractBaseUser | None, note: str = "") -> WorkOrder:
    """Start (or resume after a hold): the event records who and when."""
    require_scopes(actor, OPERATOR)
    with transaction.atomic():
        locked = lock_work_order(work_order)
        resumed = locked.status == S.ON_HOLD
        details = {"resumed_from_hold": locked.hold_reason} if resumed else {}
        if locked.assigned_technician:
            details["technician"] = locked.assigned_technician
        return transition_locked(locked, S.IN_PROGRESS, actor=actor, note=note or "Started", details=details)


def work_order_hold(
    *, work_order: WorkOrder | int, reason: str, actor: AbstractBaseUser | None, note: str = ""
) -> WorkOrder:
    """Put a started order on hold; the reason is one of HoldReason ("other" needs a note)."""
    require_scopes(actor, OPERATOR)
    if reason not in HoldReason.values:
        raise InvalidInput(f"Unknown hold reason {reason!r}.", field="reason", allowed=list(HoldReason.values))
    if reason == HoldReason.OTHER and not note.strip():
        raise InvalidInput("A hold for another reason needs a note saying why.", field="note")
    with transaction.atomic():
        locked = lock_work_order(work_order)
        _require_illegal_check(locked, S.ON_HOLD)
        locked.hold_reason = reason
        text = f"On hold: {HoldReason(reason).label}" + (f" — {note.strip()}" if note.strip() else "")
        return transition_locked(
            locked, S.ON_HOLD, actor=actor, note=text, details={"hold_reason": reason, "note": note.strip()}
        )


def work_order_cancel(*, work_order: WorkOrder | int, actor: AbstractBaseUser | None, reason: str) -> WorkOrder:
    """Cancel with a reason (alarms shelved until the order closes are unshelved)."""
    require_scopes(actor, OPERATOR)
    if not reason.strip():
        raise InvalidInput("Say why the order is cancelled.", field="reason")
    with transaction.atomic():
        _lock_alarms_waiting_on(work_order)  # alarm rows before the work-order row
        locked = lock_work_order(work_order)
        return transition_locked(locked, S.CANCELLED, actor=actor, note=f"Cancelled: {reason.strip()}")


def failure_class_for(equipment_type: str) -> FailureCode | None:
    """The failure class whose keyword the cell's equipment type contains (pump, compressor, …)."""
    kind = (equipment_type or "").lower()
    classes = FailureCode.objects.filter(level=FailureCodeLevel.CLASS, active=True).order_by("code")
    matches = [c for c in classes if c.equipment_type and c.equipment_type.lower() in kind]
    # "press" is in "compressor": prefer the longest keyword that matches.
    return max(matches, key=lambda c: len(c.equipment_type), default=None)


def _code(level: str, code: str, field: str, *, allowed: list[str]) -> FailureCode:
    found = FailureCode.objects.filter(level=level, code=code, active=True).select_related("parent").first()
    if found is None:
        raise InvalidInput(
            f"{field}: unknown {level} code {code!r}.", field=field, code="unknown_failure_code", allowed=allowed
        )
    return found


def _resolve_codes(work_order: WorkOrder, problem: str, cause: str, remedy: str) -> dict[str, FailureCode]:
    failure_class = failure_class_for(work_order.cell.equipment_type)
    if failure_class is None:
        raise InvalidInput(
            f"No failure class for {work_order.cell.tag} ({work_order.cell.equipment_type}).", field="problem_code"
        )
    problems = list(failure_class.children.filter(level=FailureCodeLevel.PROBLEM, active=True))
    allowed = [p.code for p in problems]
    found = next((p for p in problems if p.code == problem), None)
    if found is None:
        raise InvalidInput(
            f"problem_code: {problem!r} is not a problem of class {failure_class.code}.",
            field="problem_code",
            code="unknown_failure_code",
            allowed=allowed,
        )
    causes = FailureCode.objects.filter(level=FailureCodeLevel.CAUSE, active=True)
    cause_code = _code(
        FailureCodeLevel.CAUSE, cause, "cause_code", allowed=[c.code for c in causes if c.parent_id in (None, found.pk)]
    )
    if cause_code.parent_id not in (None, found.pk):
        raise InvalidInput(f"cause_code: {cause!r} is not a cause of {found.code}.", field="cause_code")
    remedies = FailureCode.objects.filter(level=FailureCodeLevel.REMEDY, active=True).values_list("code", flat=True)
    remedy_code = _code(FailureCodeLevel.REMEDY, remedy, "remedy_code", allowed=list(remedies))
    return {"failure_class": failure_class, "problem": found, "cause": cause_code, "remedy": remedy_code}


def _labour(hours: Any) -> Decimal:
    try:
        value = Decimal(str(hours)).quantize(Decimal("0.01"))
    except (InvalidOperation, ValueError):
        raise InvalidInput("labour_hours: must be a number of hours.", field="labour_hours") from None
    if not Decimal("0") < value <= MAX_LABOUR_HOURS:
        raise InvalidInput(f"labour_hours: must be above 0 and at most {MAX_LABOUR_HOURS}.", field="labour_hours")
    return value


def work_order_complete(
    *,
    work_order: WorkOrder | int,
    actor: AbstractBaseUser | None,
    work_done: str,
    problem_code: str,
    cause_code: str,
    remedy_code: str,
    rca_verdict: str,
    actual_root_cause: str = "",
    parts_used: list[dict[str, Any]] | None = None,
    labour_hours: Any,
) -> CompletionReport:
    """Complete a started order with the technician's report, in one transaction (no partial
    write): codes checked against the list, parts against the equipment's stock (decremented),
    and the proposed cause confirmed or corrected beside the proposal in the failure history."""
    require_scopes(actor, OPERATOR)
    if not work_done.strip():
        raise InvalidInput("work_done: say what was done.", field="work_done")
    if rca_verdict not in RcaVerdict.values:
        raise InvalidInput(f"Unknown verdict {rca_verdict!r}.", field="rca_verdict", allowed=list(RcaVerdict.values))
    if rca_verdict == RcaVerdict.CORRECTED and not actual_root_cause.strip():
        raise InvalidInput("A corrected RCA needs the actual root cause.", field="actual_root_cause")
    hours = _labour(labour_hours)
    with transaction.atomic():
        _lock_alarms_waiting_on(work_order)  # alarm rows before the work-order row
        locked = lock_work_order(work_order)
        _require_illegal_check(locked, S.COMPLETED)
        codes = _resolve_codes(locked, problem_code, cause_code, remedy_code)
        failure = FailureHistory.objects.select_for_update().filter(work_order=locked).first()
        proposed = failure.failure_mode if failure else ""
        actual_mode = codes["problem"].failure_mode
        if rca_verdict == RcaVerdict.CONFIRMED:
            if failure is None:
                raise InvalidInput(
                    "rca_verdict: there is no proposed root cause to confirm; correct it with the actual cause.",
                    field="rca_verdict",
                )
            if proposed != actual_mode:
                raise InvalidInput(
                    f"rca_verdict: the RCA proposed {proposed}, the reported problem is {actual_mode}: "
                    "that is a correction.",
                    field="rca_verdict",
                )
        used = parts_take_from_stock(work_order=locked, parts=parts_used or [], actor=actor)
        report = CompletionReport.objects.create(
            work_order=locked,
            work_done=work_done.strip()[:4000],
            actual_root_cause=actual_root_cause.strip()[:4000],
            rca_verdict=rca_verdict,
            proposed_failure_mode=proposed,
            parts_used=used,
            labour_hours=hours,
            technician=locked.assigned_technician,
            reported_by=actor,
            **codes,
        )
        _record_actual_cause(locked, failure, report, actor)
        transition_locked(
            locked,
            S.COMPLETED,
            actor=actor,
            note=f"Completed: {codes['problem'].label} / {codes['cause'].label} / {codes['remedy'].label}"[:500],
            details={"completion_report_id": report.pk, "rca_verdict": rca_verdict, "parts_used": used},
        )
    return report


def _record_actual_cause(
    work_order: WorkOrder, failure: FailureHistory | None, report: CompletionReport, actor: AbstractBaseUser | None
) -> FailureHistory:
    """The technician's cause beside the proposal; the row becomes a confirmed failure."""
    now = timezone.now()
    if failure is None:  # no proposal was recorded (a fallback RCA): the report is the first word
        rca = work_order.rca_details or {}
        failure = FailureHistory(
            cell=work_order.cell,
            failure_time=work_order.trigger_anomaly_time or work_order.created_at,
            failure_mode=failure_mode_from_rca(rca) if rca.get("root_cause") else "unknown",
            root_cause=work_order.rca_summary[:4000],
            signal_patterns=rca.get("signal_patterns") or {},
            work_order=work_order,
        )
    corrected = report.rca_verdict == RcaVerdict.CORRECTED
    failure.verification = FailureVerification.CORRECTED if corrected else FailureVerification.CONFIRMED
    failure.confirmed_failure_mode = report.problem.failure_mode
    cause = report.actual_root_cause or (failure.root_cause if not corrected else "")
    failure.confirmed_root_cause = f"{cause} [{report.cause.code}: {report.cause.label}; {report.remedy.label}]".strip()
    failure.confirmed_by = actor
    failure.confirmed_at = now
    failure.resolved_time = now
    failure.save()
    audit_record(
        actor=actor,
        action="failure_history.confirm",
        target_type="failure_history",
        target_id=failure.pk,
        details={
            "work_order_id": work_order.pk,
            "verdict": report.rca_verdict,
            "proposed": report.proposed_failure_mode,
            "actual": report.problem.failure_mode,
        },
    )
    return failure
