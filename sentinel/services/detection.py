"""Transitions the detector makes (raise, escalate, clear), in batches so a scan costs a constant
number of queries whatever the number of signals: clears move through the kernel's bulk transition
(core.transitions.transition_locked_many), raises and escalations are recorded through its record
step (an AlarmEvent and an audit record each, one INSERT apiece).

One open alarm per signal is a database constraint (`alarm_one_open_per_signal`): when two scans
or two workers race, the loser's insert fails and is skipped, so exactly one alarm exists and
`alarm_raised` is sent once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from core.transitions import Move, lock_rows
from sentinel.choices import AUTO_CLEARABLE_STATES, OPEN_ALARM_STATES, AlarmState, Direction, Severity
from sentinel.models import Alarm, SignalDefinition
from sentinel.services._common import alarm_move_many, alarm_record, alarms_changed, lock_alarms
from sentinel.signals import alarm_cleared, alarm_escalated, alarm_raised
from sentinel.thresholds import BreachResult


@dataclass(frozen=True, slots=True)
class AlarmRaise:
    signal_id: int
    breach: BreachResult
    value: float
    time: datetime


@dataclass(frozen=True, slots=True)
class AlarmEscalation:
    alarm_id: int
    breach: BreachResult
    value: float


def _attach_signals(alarms: Sequence[Alarm]) -> None:
    """Receivers read alarm.signal.cell: load them in one query instead of one per alarm."""
    signals = SignalDefinition.objects.select_related("cell").in_bulk({a.signal_id for a in alarms})
    for alarm in alarms:
        alarm.signal = signals[alarm.signal_id]


def _insert(alarms: list[Alarm]) -> list[Alarm]:
    """Insert in one statement; if another transaction raised one of them first, insert one by
    one and keep only ours (each in a savepoint so the caller's transaction survives)."""
    try:
        with transaction.atomic():
            return Alarm.objects.bulk_create(alarms)
    except IntegrityError:
        pass
    created = []
    for alarm in alarms:
        alarm.pk = None
        try:
            with transaction.atomic():
                alarm.save(force_insert=True)
        except IntegrityError:
            continue  # already open: raised by a concurrent scan
        created.append(alarm)
    return created


def _limit_of(breach: BreachResult) -> tuple[str, str, str, float]:
    """(severity, direction, threshold field, threshold value) of a breach; raises and escalations
    are only ever made from one."""
    severity, direction, field, value = (
        breach.severity,
        breach.direction,
        breach.threshold_field,
        breach.threshold_value,
    )
    if severity is None or direction is None or field is None or value is None:
        raise ValueError("An alarm needs a breach: severity, direction and the limit it crossed.")
    return severity, direction, field, value


def _new_alarm(r: AlarmRaise) -> Alarm:
    severity, direction, threshold_field, threshold_value = _limit_of(r.breach)
    return Alarm(
        signal_id=r.signal_id,
        state=AlarmState.ACTIVE_UNACK,
        severity=severity,
        direction=direction,
        threshold_field=threshold_field,
        threshold_value=threshold_value,
        value=r.value,
        peak_value=r.value,
        raised_at=r.time,
    )


def alarm_raise_many(*, raises: Sequence[AlarmRaise]) -> list[Alarm]:
    """Open an active, unacknowledged alarm per breach (skipping signals that already have one),
    record the event + audit, announce them (`alarm_changed`, one INSERT) and send `alarm_raised`
    for each — inside the transaction."""
    if not raises:
        return []
    with transaction.atomic():
        alarms = [_new_alarm(r) for r in raises]
        created = _insert(alarms)
        if not created:
            return []
        _attach_signals(created)
        moves = [
            Move(
                a,
                "",
                a.state,
                {
                    "severity": a.severity,
                    "direction": a.direction,
                    "threshold_field": a.threshold_field,
                    "threshold_value": a.threshold_value,
                    "value": a.value,
                },
            )
            for a in created
        ]
        alarm_record(moves, action="raise")
        alarms_changed(moves, action="raise")  # from_state "": a new alarm
        for alarm in created:
            alarm_raised.send(sender=Alarm, alarm=alarm)
    return created


def alarm_raise(*, signal: SignalDefinition | int, breach: BreachResult, value: float, time: datetime) -> Alarm | None:
    """Raise one alarm; None when the signal already has an open one."""
    signal_id = signal.pk if isinstance(signal, SignalDefinition) else int(signal)
    created = alarm_raise_many(raises=[AlarmRaise(signal_id, breach, value, time)])
    return created[0] if created else None


def alarm_escalate_many(*, escalations: Sequence[AlarmEscalation]) -> list[Alarm]:
    """Alert → trip: update severity, threshold and value, record, announce (`alarm_changed`, one
    INSERT) and send `alarm_escalated`."""
    if not escalations:
        return []
    by_id = {e.alarm_id: e for e in escalations}
    with transaction.atomic():
        locked = lock_rows(Alarm.objects.filter(state__in=OPEN_ALARM_STATES, severity=Severity.ALERT), by_id)
        previous = {}
        for alarm in locked:
            e = by_id[alarm.pk]
            previous[alarm.pk] = (alarm.severity, alarm.threshold_field, alarm.threshold_value)
            alarm.severity, _, alarm.threshold_field, alarm.threshold_value = _limit_of(e.breach)
            alarm.value = e.value
            alarm.peak_value = _peak(alarm, e.value)
        if not locked:
            return []
        Alarm.objects.bulk_update(locked, ["severity", "threshold_field", "threshold_value", "value", "peak_value"])
        _attach_signals(locked)
        moves = [
            Move(
                a,
                a.state,
                a.state,
                {
                    "escalated_from": previous[a.pk][0],
                    "severity": a.severity,
                    "threshold_field": a.threshold_field,
                    "threshold_value": a.threshold_value,
                    "value": a.value,
                },
            )
            for a in locked
        ]
        alarm_record(moves, action="escalate")
        alarms_changed(moves, action="escalate")  # the state stays; the severity is now trip
        for alarm in locked:
            severity, field, _ = previous[alarm.pk]
            alarm_escalated.send(sender=Alarm, alarm=alarm, previous_severity=severity, previous_threshold_field=field)
    return locked


def alarm_clear_many(*, values: Mapping[int, float], now: datetime | None = None) -> list[Alarm]:
    """Close alarms whose signal returned inside its band; `values` maps alarm id → the value.
    Only annunciated alarms auto-clear; shelved / out-of-service ones are decided on return.
    Announced with `alarm_changed` (one INSERT for all, in this transaction). `now` is the evaluation's time (a replayed or back-filled history clears when its values did)."""
    if not values:
        return []
    cleared_at = now or timezone.now()

    def cleared(alarm: Alarm, move: Move) -> list[str]:
        alarm.cleared_at = cleared_at
        move.details.update(value=values[alarm.pk], acknowledged=alarm.acknowledged_at is not None)
        if alarm.chattering:
            move.details["chattering"] = True
        return ["cleared_at"]

    with transaction.atomic():
        locked = lock_alarms(values, states=AUTO_CLEARABLE_STATES)
        moves = alarm_move_many(locked, AlarmState.CLEARED, action="clear", verb="clear", on_move=cleared)
        alarms_changed(moves, action="clear")
        for alarm in locked:
            alarm_cleared.send(sender=Alarm, alarm=alarm)
    return locked


def alarm_clear(*, alarm: Alarm | int, value: float) -> Alarm | None:
    pk = alarm.pk if isinstance(alarm, Alarm) else int(alarm)
    cleared = alarm_clear_many(values={pk: value})
    return cleared[0] if cleared else None


def _peak(alarm: Alarm, value: float) -> float:
    if alarm.direction == Direction.LOW:
        return min(alarm.peak_value, value)
    return max(alarm.peak_value, value)


def alarm_record_peaks(*, peaks: Iterable[tuple[int, float]]) -> int:
    """Store new worst values of open alarms (a measurement, not a transition: no event)."""
    alarms = [Alarm(pk=pk, peak_value=value) for pk, value in peaks]
    if alarms:
        Alarm.objects.bulk_update(alarms, ["peak_value"])
    return len(alarms)
