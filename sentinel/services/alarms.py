"""Operator transitions of one alarm: acknowledge, shelve, unshelve, out of service, return.

Each service locks the alarm row and moves it with the kernel's transition helper
(`_common.alarm_move` → core.transitions): the map checked (illegal → Conflict listing the allowed
states), the row saved, an AlarmEvent and an audit record written, in one transaction.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from core.access import stored_user
from core.errors import Conflict, InvalidInput
from core.transitions import Move, lock_rows
from sentinel.choices import AlarmState
from sentinel.models import Alarm, Cell, SignalDefinition, SignalLatest
from sentinel.services._common import (
    ALARM_RETURN_MACHINE,
    alarm_move,
    alarm_move_many,
    alarms_changed,
    illegal_transition,
    lock_alarm,
)
from sentinel.signals import alarm_cleared
from sentinel.thresholds import is_clear

MAX_SHELVE_MINUTES = 7 * 24 * 60
# A reason is stored on the AlarmEvent (comment, CharField(max_length=500)) and in the audit record.
REASON_MAX_LENGTH = 500
# Characters that draw nothing: whitespace, \x1c-\x1f and \x85 (what str.strip() removes; JSON Schema's
# \s has not the last five), the soft hyphen, zero-width spaces and joiners, direction marks, the
# word-joiner block, variation selectors, the BOM,
# Hangul fillers and the blank braille pattern. A reason needs one character outside them. Written
# for both Python's `re` and JSON Schema's ECMA-262 patterns (the API states it).
_INVISIBLE = (
    r"\s\x1c-\x1f\x85\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    r"\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0"
)
REASON_PATTERN = f"[^{_INVISIBLE}]"
_VISIBLE = re.compile(REASON_PATTERN)


def has_visible_character(text: str) -> bool:
    """Whether `text` shows anything: a reason of zero-width spaces reads as blank on every page."""
    return _VISIBLE.search(text) is not None


def required_reason(comment: str | None, *, verb: str) -> str:
    """The reason an operator gives to hide an alarm (shelve, out of service), stripped: ISA-18.2
    makes removing an alarm from view an authorised act that records why. Blank, whitespace-only,
    invisible-only (zero-width spaces…) or longer than REASON_MAX_LENGTH is a 422 naming `comment`
    (checked before the alarm is locked, so a refused request changes nothing and writes no event
    or audit record)."""
    reason = comment.strip() if isinstance(comment, str) else ""
    if not has_visible_character(reason):
        raise InvalidInput(f"comment: say why the alarm is {verb} (a reason is required).", field="comment")
    if len(reason) > REASON_MAX_LENGTH:
        raise InvalidInput(f"comment: at most {REASON_MAX_LENGTH} characters.", field="comment")
    return reason


def alarm_acknowledge(*, alarm: Alarm | int, actor: AbstractBaseUser | None, comment: str = "") -> Alarm:
    """The operator has seen the alarm: record who, when and an optional comment."""

    def acknowledged(locked: Alarm, _move: Move) -> list[str]:
        locked.acknowledged_at = timezone.now()
        locked.acknowledged_by = stored_user(actor)
        locked.acknowledge_comment = (comment or "")[:500]
        return ["acknowledged_at", "acknowledged_by", "acknowledge_comment"]

    with transaction.atomic():
        alarm = lock_alarm(alarm)
        alarm_move(
            alarm,
            AlarmState.ACKNOWLEDGED,
            action="acknowledge",
            verb="acknowledge",
            actor=actor,
            comment=comment,
            on_move=acknowledged,
        )
    return alarm


def alarm_shelve(
    *,
    alarm: Alarm | int,
    actor: AbstractBaseUser | None,
    minutes: int | None = None,
    until_work_order_closes: bool = False,
    comment: str = "",
) -> Alarm:
    """Hide the alarm for `minutes`, or until its work order closes (exactly one of the two), with a
    required reason (`comment`, see `required_reason`): the handover lists shelved alarms with why.

    A shelve is always time-limited (ISA-18.2): "until the work order closes" also ends at the
    longest shelve, MAX_SHELVE_MINUTES, whichever comes first — so a shelve tied to an order that
    is already closed, or never comes, cannot hide the alarm for ever."""
    if (minutes is None) == (not until_work_order_closes):
        raise InvalidInput("Give either minutes or until_work_order_closes.", field="minutes")
    if minutes is not None and not (1 <= int(minutes) <= MAX_SHELVE_MINUTES):
        raise InvalidInput(f"minutes: must be between 1 and {MAX_SHELVE_MINUTES}.", field="minutes")
    comment = required_reason(comment, verb="shelved")
    until = timezone.now() + timedelta(minutes=int(minutes) if minutes is not None else MAX_SHELVE_MINUTES)

    def shelved(locked: Alarm, move: Move) -> list[str]:
        locked.state_before_shelve = move.from_state
        locked.shelved_until = until
        locked.shelved_until_work_order_closes = bool(until_work_order_closes)
        return ["state_before_shelve", "shelved_until", "shelved_until_work_order_closes"]

    with transaction.atomic():
        alarm = lock_alarm(alarm)
        alarm_move(
            alarm,
            AlarmState.SHELVED,
            action="shelve",
            verb="shelve",
            actor=actor,
            comment=comment,
            details={
                "shelved_until": until.isoformat(),
                "until_work_order_closes": bool(until_work_order_closes),
            },
            on_move=shelved,
        )
    return alarm


def _state_on_return(alarm: Alarm, fallback: str, latest: tuple[float, bool] | None) -> tuple[str, float | None]:
    """Where an alarm goes when it is unshelved or returned to service: cleared if its signal's
    current value (`latest`: value, stale) is back inside the band (deadband included), else
    `fallback`."""
    if latest is not None and not latest[1] and is_clear(alarm.signal, latest[0], direction=alarm.direction):
        return AlarmState.CLEARED, latest[0]
    return fallback, latest[0] if latest else None


def _latest_of(alarms: list[Alarm]) -> dict[int, tuple[float, bool]]:
    """Signal id → (value, stale) of these alarms' signals, in one query."""
    rows = SignalLatest.objects.filter(signal_id__in=[a.signal_id for a in alarms]).values_list(
        "signal_id", "value", "stale"
    )
    return {signal_id: (value, stale) for signal_id, value, stale in rows}


def _fallback_of_shelve(alarm: Alarm) -> str:
    """The state a shelve restores: the one before it, when annunciated, else active_unack."""
    before = alarm.state_before_shelve or AlarmState.ACTIVE_UNACK
    return before if before in (AlarmState.ACTIVE_UNACK, AlarmState.ACKNOWLEDGED) else AlarmState.ACTIVE_UNACK


def _returned(locked: Alarm, move: Move) -> list[str]:
    """What leaving a shelve or out of service also resets (and a clear stamps)."""
    locked.shelved_until = None
    locked.shelved_until_work_order_closes = False
    locked.state_before_shelve = ""
    fields = ["shelved_until", "shelved_until_work_order_closes", "state_before_shelve"]
    if move.to_state == AlarmState.CLEARED:
        locked.cleared_at = timezone.now()
        fields.append("cleared_at")
    return fields


def _leave(alarm: Alarm, *, action: str, fallback: str, actor: AbstractBaseUser | None, comment: str) -> Alarm:
    """Out of shelve or out of service (the caller checked which): back to `fallback` or cleared."""
    to_state, value = _state_on_return(alarm, fallback, _latest_of([alarm]).get(alarm.signal_id))
    alarm_move(
        alarm,
        to_state,
        action=action,
        verb=action.replace("_", " "),
        actor=actor,
        comment=comment,
        details={"value": value},
        on_move=_returned,
        machine=ALARM_RETURN_MACHINE,
    )
    if to_state == AlarmState.CLEARED:
        alarm_cleared.send(sender=Alarm, alarm=alarm)
    return alarm


def alarm_unshelve(*, alarm: Alarm | int, actor: AbstractBaseUser | None = None, comment: str = "") -> Alarm:
    """Show a shelved alarm again: cleared if the condition is gone, else its state before."""
    with transaction.atomic():
        alarm = lock_alarm(alarm)
        if alarm.state != AlarmState.SHELVED:
            raise illegal_transition(alarm, verb="unshelve")
        return _leave(alarm, action="unshelve", fallback=_fallback_of_shelve(alarm), actor=actor, comment=comment)


def alarm_unshelve_for_work_order_closed(
    *, alarm: Alarm | int, actor: AbstractBaseUser | None = None, work_order_id: int | None = None
) -> Alarm | None:
    """Hook for workorders: the work order linked to this alarm closed. Unshelves the alarm if it
    was shelved "until the work order closes"; otherwise does nothing and returns None."""
    with transaction.atomic():
        locked = lock_alarm(alarm)
        if locked.state != AlarmState.SHELVED or not locked.shelved_until_work_order_closes:
            return None
        comment = f"work order #{work_order_id} closed" if work_order_id else "work order closed"
        return alarm_unshelve(alarm=locked, actor=actor, comment=comment)


def alarm_unshelve_expired(*, now: datetime | None = None) -> list[Alarm]:
    """Unshelve every alarm whose timed shelve has run out (called by the scan), with a constant
    number of queries whatever their number: the alarms locked in pk order, their signals' latest
    values read once, then one bulk move per target state (cleared, or the state before)."""
    now = now or timezone.now()
    expired = Alarm.objects.filter(state=AlarmState.SHELVED, shelved_until__lte=now).select_related("signal")
    pks = list(expired.values_list("pk", flat=True))  # the scan's usual answer: none, one query
    if not pks:
        return []
    with transaction.atomic():
        locked = lock_rows(expired, pks)  # re-read under the lock: still shelved and expired
        latest = _latest_of(locked)
        values: dict[int, float | None] = {}
        by_state: dict[str, list[Alarm]] = {}
        for alarm in locked:
            to_state, values[alarm.pk] = _state_on_return(
                alarm, _fallback_of_shelve(alarm), latest.get(alarm.signal_id)
            )
            by_state.setdefault(to_state, []).append(alarm)

        def expired_shelve(alarm: Alarm, move: Move) -> list[str]:
            move.details["value"] = values[alarm.pk]
            return _returned(alarm, move)

        for to_state, alarms in sorted(by_state.items()):
            moves = alarm_move_many(
                alarms,
                to_state,
                action="unshelve",
                verb="unshelve",
                comment="shelve expired",
                on_move=expired_shelve,
                machine=ALARM_RETURN_MACHINE,
            )
            alarms_changed(moves, action="unshelve")
        for alarm in by_state.get(AlarmState.CLEARED, []):
            alarm_cleared.send(sender=Alarm, alarm=alarm)
    return locked


def alarm_put_out_of_service(*, alarm: Alarm | int, actor: AbstractBaseUser | None, comment: str) -> Alarm:
    """Take the alarm out of service (maintenance on the instrument or the equipment). The reason
    (`comment`) is required: blank or whitespace-only is a 422 naming `comment` (`required_reason`)."""
    comment = required_reason(comment, verb="put out of service")
    with transaction.atomic():
        alarm = lock_alarm(alarm)
        alarm_move(
            alarm,
            AlarmState.OUT_OF_SERVICE,
            action="out_of_service",
            verb="put out of service",
            actor=actor,
            comment=comment,
        )
    return alarm


# Annunciated or set aside by a person: what nothing would clear once its signal is no longer evaluated.
NOT_EVALUATED_MOVES_OUT = (AlarmState.ACTIVE_UNACK, AlarmState.ACKNOWLEDGED, AlarmState.SHELVED)


def alarms_out_of_service_for_unevaluated(
    *, signal_ids: list[int], actor: AbstractBaseUser | None, reason: str
) -> list[Alarm]:
    """The open alarms of signals no longer evaluated — a signal disabled, a cell taken off
    onboarding — go out of service with the reason (audited, announced), one by one in id order:
    the scan skips such signals, so nothing would ever clear them, and they stood in the Control
    Room for good. Returning them to service is a person's decision, as for any out-of-service alarm."""
    pks = Alarm.objects.filter(signal_id__in=signal_ids, state__in=NOT_EVALUATED_MOVES_OUT).order_by("pk")
    moved: list[Alarm] = []
    for pk in pks.values_list("pk", flat=True):
        try:
            moved.append(alarm_put_out_of_service(alarm=pk, actor=actor, comment=reason))
        except Conflict:  # listed unlocked: since then cleared, or a person put it out of service — done
            continue
    return moved


def alarm_return_to_service(*, alarm: Alarm | int, actor: AbstractBaseUser | None, comment: str = "") -> Alarm:
    """Back in service: cleared if the value is normal, else annunciated again (active_unack).

    Refused (409 `signal_not_evaluated`) while its signal is disabled or its cell is off onboarding:
    the scan skips such a signal, so an alarm annunciated again would stand for good — enable the
    signal (or onboard the cell) first; returning its alarms stays a person's decision."""
    with transaction.atomic():
        # The signal row first (the lock order: signals → alarms): an admin disabling the signal holds
        # it until its own alarms-out-of-service pass commits, so `enabled` is read as committed
        # after it — read unlocked, a return racing the disable slipped past that pass.
        pk = alarm.pk if isinstance(alarm, Alarm) else int(alarm)
        signal_id = Alarm.objects.filter(pk=pk).values_list("signal_id", flat=True).first()
        if signal_id is not None:
            list(SignalDefinition.objects.select_for_update().filter(pk=signal_id).values_list("pk", flat=True))
        alarm = lock_alarm(pk)
        if alarm.state != AlarmState.OUT_OF_SERVICE:
            raise illegal_transition(alarm, verb="return to service")
        signal = alarm.signal
        # The cell row after the alarm (signals → alarms → cell): an admin taking the cell off
        # onboarding holds it until its alarms-out-of-service pass commits; read it locked.
        onboarded = (
            Cell.objects.select_for_update(no_key=True)
            .filter(pk=signal.cell_id)
            .values_list("onboarding_complete", flat=True)
            .first()
        )
        if not (signal.enabled and onboarded):
            why = "is disabled" if not signal.enabled else f"is on cell {signal.cell.tag}, which is off onboarding"
            raise Conflict(
                f"Alarm #{alarm.pk}: signal {signal.cell.tag} {signal.key} {why}, so nothing evaluates it; "
                "enable it in the admin first, then return the alarm to service.",
                field="alarm_id",
                code="signal_not_evaluated",
                state=alarm.state,
            )
        return _leave(alarm, action="return_to_service", fallback=AlarmState.ACTIVE_UNACK, actor=actor, comment=comment)
