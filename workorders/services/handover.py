"""Shift handover: an agent drafts the report, the outgoing operator edits and signs it, the
incoming operator (a different person) acknowledges it.

Lifecycle (`workorders.handover_choices`): draft → signed → acknowledged; an illegal move is a 409
naming the allowed ones. Only the outgoing operator edits or signs (403 for anyone else who can see
it; a draft is invisible — 404 — to others, see `shift_selectors`); the outgoing operator never
acknowledges their own report (403, separation of duties). Every step is audited and announced on
the bus as `handover_updated`: while the report is a draft, to its author and the admins only
(who may see it), then to everyone; the drafting run's own events are the author's alone.

The draft comes from the Shift Handover agent (`workorders.agents.handover`) through the one agent
loop, reading the shift's alarms, work orders, limit changes and logbook with the ordinary read
capabilities. With the fake engine the offline stand-in (`offline/handover.py`) writes it
from those same reads, and the report says so in its first line (`drafted_offline`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date as Date
from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from core.access import admin_ids
from core.agents.engines.base import Engine
from core.agents.loop import run_agent
from core.audit import audit_record
from core.capabilities import CapabilityContext
from core.errors import Conflict, Forbidden, InvalidInput
from core.events import private_scope, publish, turn_scope
from core.events.contract import _Payload, register_event_type
from core.transitions import Move, transition_locked
from workorders.agents import handover as handover_agent
from workorders.choices import Shift
from workorders.handover_choices import HANDOVER_MACHINE, HandoverStatus, handover_allowed_transitions
from workorders.models import ShiftHandover
from workorders.shifts import shift_at, shift_window

H = HandoverStatus
MAX_REPORT_CHARS = 20_000
MAX_COMMENT_CHARS = 500
# A handover is drafted at the end of a shift; one missed (a weekend, a sick day) is caught up
# within the week, while its alarms, orders and logbook are still in the agents' read windows. An
# older or a future date is refused before the shift's window is computed (9999-12-31 overflowed).
MAX_HANDOVER_AGE_DAYS = 7
EVENT_TYPE = "handover_updated"
AUDIT_TARGET = "workorders.shift_handover"
OFFLINE_LABEL = (
    "[Offline draft: assembled by ARIA's deterministic stand-in from the shift's records; no language model "
    "was used. Check and edit before signing.]"
)


class HandoverUpdated(_Payload):
    """Bus payload (docs/EVENTS.md): a handover was drafted, edited, signed or acknowledged."""

    handover_id: int
    status: str
    date: str
    shift: str
    outgoing: str
    incoming: str | None
    action: str


def register_events() -> None:
    register_event_type(EVENT_TYPE, HandoverUpdated)


def _payload(handover: ShiftHandover, action: str) -> dict[str, object]:
    return {
        "handover_id": handover.pk,
        "status": handover.status,
        "date": handover.date.isoformat(),
        "shift": handover.shift,
        "outgoing": handover.outgoing.get_username(),
        "incoming": handover.incoming.get_username() if handover.incoming else None,
        "action": action,
    }


def _draft_audience(handover: ShiftHandover) -> list[int]:
    """Who may see a draft (`shift_selectors.handovers_visible`): its author and the admins. Its
    `handover_updated` goes to them alone; anyone else learns of the report once it is signed."""
    return [handover.outgoing_id, *admin_ids()]


def _announce(handover: ShiftHandover, action: str) -> None:
    if handover.status != H.DRAFT:
        publish(EVENT_TYPE, _payload(handover, action))
        return
    with private_scope(*_draft_audience(handover)):
        publish(EVENT_TYPE, _payload(handover, action))


def _audit_details(handover: ShiftHandover, **details: object) -> dict[str, object]:
    return {"date": handover.date.isoformat(), "shift": handover.shift, "status": handover.status, **details}


def _audit(handover: ShiftHandover, actor: AbstractBaseUser, action: str, **details: object) -> None:
    audit_record(
        actor=actor,
        action=f"handover.{action}",
        target_type=AUDIT_TARGET,
        target_id=handover.pk,
        details=_audit_details(handover, **details),
    )


def _shift_period(day: Date | None, shift: str | None, now: datetime) -> tuple[Date, str, datetime, datetime]:
    if day is None and shift is None:
        day, shift = shift_at(now)
    elif day is None or shift is None:
        missing = "shift" if shift is None else "date"
        raise InvalidInput(f"{missing}: give both date and shift, or neither (the current shift).", field=missing)
    if shift not in Shift.values:
        raise InvalidInput(f"shift: one of {', '.join(Shift.values)}.", field="shift")
    today = timezone.localtime(now).date()
    if day > today:
        raise InvalidInput(f"date: the {shift} shift of {day} has not started yet.", field="date")
    if day < today - timedelta(days=MAX_HANDOVER_AGE_DAYS):
        earliest = today - timedelta(days=MAX_HANDOVER_AGE_DAYS)
        raise InvalidInput(
            f"date: a handover is drafted for a shift of the last {MAX_HANDOVER_AGE_DAYS} days "
            f"(from {earliest}); {day} is older.",
            field="date",
        )
    start, end = shift_window(day, shift)
    if start > now:
        raise InvalidInput(f"date: the {shift} shift of {day} has not started yet.", field="date")
    return day, shift, start, end


def handover_draft(
    *,
    actor: AbstractBaseUser,
    date: Date | None = None,
    shift: str | None = None,
    engine: Engine | None = None,
    now: datetime | None = None,
) -> ShiftHandover:
    """Have the agent draft the handover of a shift (default: the current one) for `actor`.

    `date` lies within the last `MAX_HANDOVER_AGE_DAYS` days up to today and the shift has started;
    anything else is a 422 naming `date` (or `shift`)."""
    now = now or timezone.now()
    day, shift, start, end = _shift_period(date, shift, now)
    message = handover_agent.task_message(date=day.isoformat(), shift=shift, period_start=start, period_end=end)
    # The drafting run is the author's own turn: its agent and tool events reach only their sockets.
    with turn_scope() as turn_id, private_scope(actor.pk):
        result = run_agent(
            handover_agent.build_spec(),
            messages=message,
            ctx=CapabilityContext(user=actor, turn_id=turn_id),
            engine=engine,
            subject=("shift_handover", f"{day.isoformat()}:{shift}"),
        )
    offline = result.run.engine == "fake"
    if result.output is not None:
        sections = dict(result.output)
        report = handover_agent.report_text(sections)
        if offline:
            report = f"{OFFLINE_LABEL}\n\n{report}"
        drafted_by = handover_agent.NAME
    else:  # the operator is never blocked by a failed run: an empty report to write by hand
        reason = result.finish_reason + (f": {result.run.error[:200]}" if result.run.error else "")
        sections = {"agent_error": reason}
        report = f"[The handover agent could not draft this report ({reason}). Write it here.]\n"
        drafted_by = ""
    with transaction.atomic():
        handover = ShiftHandover.objects.create(
            date=day,
            shift=shift,
            period_start=start,
            period_end=end,
            outgoing=actor,
            report=report[:MAX_REPORT_CHARS],
            draft_report=report[:MAX_REPORT_CHARS],
            sections=sections,
            drafted_by=drafted_by,
            drafted_offline=offline and bool(drafted_by),
            agent_run=result.run,
        )
        _audit(handover, actor, "draft", agent_run_id=result.run.pk, finish_reason=result.finish_reason)
        _announce(handover, "drafted")
    return handover


def _lock(handover: ShiftHandover | int) -> ShiftHandover:
    pk = handover.pk if isinstance(handover, ShiftHandover) else handover
    return ShiftHandover.objects.select_for_update(of=("self",)).select_related("outgoing", "incoming").get(pk=pk)


def _require_outgoing(handover: ShiftHandover, actor: AbstractBaseUser, doing: str) -> None:
    if handover.outgoing_id != actor.pk:
        raise Forbidden(
            f"Only the outgoing operator ({handover.outgoing.get_username()}) may {doing} handover {handover.pk}.",
            code="not_outgoing_operator",
        )


def _advance(
    handover: ShiftHandover,
    to_status: str,
    *,
    actor: AbstractBaseUser,
    action: str,
    announced: str,
    on_move: Callable[[ShiftHandover, Move], list[str]],
    **details: object,
) -> None:
    """One move of the lifecycle map on a locked row, through the kernel's transition helper: the
    409 naming the allowed moves, the row saved, `handover.<action>` audited and announced."""
    transition_locked(
        HANDOVER_MACHINE,
        handover,
        to_status,
        actor=actor,
        target_type=AUDIT_TARGET,
        message=lambda row, to: f"Handover {row.pk} is {row.status}; it cannot become {to}.",
        on_move=on_move,
        save_fields=("updated_at",),
        audit=lambda m: (f"handover.{action}", _audit_details(handover, **{"from": m.from_state, **details})),
        event=lambda m: (EVENT_TYPE, _payload(handover, announced)),
    )


def _clean_report(report: str) -> str:
    text = (report or "").strip()
    if not text:
        raise InvalidInput("report: may not be empty.", field="report")
    if "\x00" in text:
        raise InvalidInput("report: contains a NUL character.", field="report")
    if len(text) > MAX_REPORT_CHARS:
        raise InvalidInput(f"report: at most {MAX_REPORT_CHARS} characters ({len(text)} given).", field="report")
    return text + "\n"


def handover_edit(*, handover: ShiftHandover | int, actor: AbstractBaseUser, report: str) -> ShiftHandover:
    """The outgoing operator rewrites the draft (a signed report is never edited: 409)."""
    text = _clean_report(report)
    with transaction.atomic():
        locked = _lock(handover)
        _require_outgoing(locked, actor, "edit")
        if locked.status != H.DRAFT:
            raise Conflict(
                f"Handover {locked.pk} is {locked.status}; only a draft can be edited.",
                field="status",
                code="handover_not_draft",
                allowed=handover_allowed_transitions(locked.status),
            )
        if text == locked.report:
            return locked
        before = len(locked.report)
        locked.report = text
        locked.revision += 1
        locked.save(update_fields=["report", "revision", "updated_at"])
        _audit(locked, actor, "edit", revision=locked.revision, chars_before=before, chars_after=len(text))
        _announce(locked, "edited")
    return locked


def handover_sign(*, handover: ShiftHandover | int, actor: AbstractBaseUser) -> ShiftHandover:
    """The outgoing operator signs their draft: from now on it is the record, read-only."""
    with transaction.atomic():
        locked = _lock(handover)
        _require_outgoing(locked, actor, "sign")
        _clean_report(locked.report)

        def signed(row: ShiftHandover, _m: Move) -> list[str]:
            row.signed_at = timezone.now()
            return ["signed_at"]

        _advance(
            locked, H.SIGNED, actor=actor, action="sign", announced="signed", on_move=signed, revision=locked.revision
        )
    return locked


def handover_acknowledge(*, handover: ShiftHandover | int, actor: AbstractBaseUser, comment: str = "") -> ShiftHandover:
    """The incoming operator acknowledges a signed report — never its own author."""
    note = (comment or "").strip()
    if len(note) > MAX_COMMENT_CHARS:
        raise InvalidInput(f"comment: at most {MAX_COMMENT_CHARS} characters.", field="comment")
    with transaction.atomic():
        locked = _lock(handover)
        # Only a signed report can be acknowledged: an unsigned one is the 409 below, whoever asks.
        if locked.status == H.SIGNED and locked.outgoing_id == actor.pk:
            raise Forbidden(
                f"Handover {locked.pk} was signed by you; the incoming operator acknowledges it.",
                code="separation_of_duties",
            )

        def acknowledged(row: ShiftHandover, _m: Move) -> list[str]:
            row.incoming = actor
            row.acknowledged_at = timezone.now()
            row.acknowledge_comment = note
            return ["incoming", "acknowledged_at", "acknowledge_comment"]

        _advance(
            locked,
            H.ACKNOWLEDGED,
            actor=actor,
            action="acknowledge",
            announced="acknowledged",
            on_move=acknowledged,
            comment=note,
        )
    return locked
