"""Operator transitions of one alarm: acknowledge, shelve, unshelve, out of service, return.

Each service locks the alarm row, checks the transition map (illegal → Conflict listing the
allowed states), saves, and writes an AlarmEvent plus an audit record in the same transaction.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from core.errors import InvalidInput
from sentinel.choices import AlarmState
from sentinel.models import Alarm, SignalLatest
from sentinel.services._common import check_transition, illegal_transition, lock_alarm, record_event
from sentinel.signals import alarm_cleared
from sentinel.thresholds import is_clear

MAX_SHELVE_MINUTES = 7 * 24 * 60


def alarm_acknowledge(*, alarm: Alarm | int, actor: AbstractBaseUser | None, comment: str = "") -> Alarm:
    """The operator has seen the alarm: record who, when and an optional comment."""
    with transaction.atomic():
        alarm = lock_alarm(alarm)
        check_transition(alarm, AlarmState.ACKNOWLEDGED, verb="acknowledge")
        from_state = alarm.state
        alarm.state = AlarmState.ACKNOWLEDGED
        alarm.acknowledged_at = timezone.now()
        alarm.acknowledged_by = actor if actor is not None and actor.is_authenticated else None
        alarm.acknowledge_comment = (comment or "")[:500]
        alarm.save(update_fields=["state", "acknowledged_at", "acknowledged_by", "acknowledge_comment"])
        record_event(
            alarm, action="acknowledge", from_state=from_state, to_state=alarm.state, actor=actor, comment=comment
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
    """Hide the alarm for `minutes`, or until its work order closes (exactly one of the two)."""
    if (minutes is None) == (not until_work_order_closes):
        raise InvalidInput("Give either minutes or until_work_order_closes.", field="minutes")
    if minutes is not None and not (1 <= int(minutes) <= MAX_SHELVE_MINUTES):
        raise InvalidInput(f"minutes: must be between 1 and {MAX_SHELVE_MINUTES}.", field="minutes")
    with transaction.atomic():
        alarm = lock_alarm(alarm)
        check_transition(alarm, AlarmState.SHELVED, verb="shelve")
        from_state = alarm.state
        alarm.state_before_shelve = from_state
        alarm.state = AlarmState.SHELVED
        alarm.shelved_until = timezone.now() + timedelta(minutes=int(minutes)) if minutes is not None else None
        alarm.shelved_until_work_order_closes = bool(until_work_order_closes)
        alarm.save(update_fields=["state", "state_before_shelve", "shelved_until", "shelved_until_work_order_closes"])
        record_event(
            alarm,
            action="shelve",
            from_state=from_state,
            to_state=alarm.state,
            actor=actor,
            comment=comment,
            details={
                "shelved_until": alarm.shelved_until.isoformat() if alarm.shelved_until else None,
                "until_work_order_closes": alarm.shelved_until_work_order_closes,
            },
        )
    return alarm


def _state_on_return(alarm: Alarm, fallback: str) -> tuple[str, float | None]:
    """Where an alarm goes when it is unshelved or returned to service: cleared if its signal's
    current value is back inside the band (deadband included), else `fallback`."""
    latest = SignalLatest.objects.filter(signal_id=alarm.signal_id).values_list("value", "stale").first()
    if latest is not None and not latest[1] and is_clear(alarm.signal, latest[0], direction=alarm.direction):
        return AlarmState.CLEARED, latest[0]
    return fallback, latest[0] if latest else None


def _leave(alarm: Alarm, *, action: str, fallback: str, actor: AbstractBaseUser | None, comment: str) -> Alarm:
    from_state = alarm.state
    to_state, value = _state_on_return(alarm, fallback)
    if to_state != fallback:  # restoring the state before is always legal; anything else is checked
        check_transition(alarm, to_state, verb=action.replace("_", " "))
    alarm.state = to_state
    alarm.shelved_until = None
    alarm.shelved_until_work_order_closes = False
    alarm.state_before_shelve = ""
    fields = ["state", "shelved_until", "shelved_until_work_order_closes", "state_before_shelve"]
    if to_state == AlarmState.CLEARED:
        alarm.cleared_at = timezone.now()
        fields.append("cleared_at")
    alarm.save(update_fields=fields)
    record_event(
        alarm,
        action=action,
        from_state=from_state,
        to_state=to_state,
        actor=actor,
        comment=comment,
        details={"value": value},
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
        fallback = alarm.state_before_shelve or AlarmState.ACTIVE_UNACK
        if fallback not in (AlarmState.ACTIVE_UNACK, AlarmState.ACKNOWLEDGED):
            fallback = AlarmState.ACTIVE_UNACK
        return _leave(alarm, action="unshelve", fallback=fallback, actor=actor, comment=comment)


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
    """Unshelve every alarm whose timed shelve has run out (called by the scan)."""
    now = now or timezone.now()
    expired = Alarm.objects.filter(state=AlarmState.SHELVED, shelved_until__lte=now).order_by("pk")
    return [alarm_unshelve(alarm=pk, comment="shelve expired") for pk in expired.values_list("pk", flat=True)]


def alarm_put_out_of_service(*, alarm: Alarm | int, actor: AbstractBaseUser | None, comment: str = "") -> Alarm:
    """Take the alarm out of service (maintenance on the instrument or the equipment)."""
    with transaction.atomic():
        alarm = lock_alarm(alarm)
        check_transition(alarm, AlarmState.OUT_OF_SERVICE, verb="put out of service")
        from_state = alarm.state
        alarm.state = AlarmState.OUT_OF_SERVICE
        alarm.save(update_fields=["state"])
        record_event(
            alarm, action="out_of_service", from_state=from_state, to_state=alarm.state, actor=actor, comment=comment
        )
    return alarm


def alarm_return_to_service(*, alarm: Alarm | int, actor: AbstractBaseUser | None, comment: str = "") -> Alarm:
    """Back in service: cleared if the value is normal, else annunciated again (active_unack)."""
    with transaction.atomic():
        alarm = lock_alarm(alarm)
        if alarm.state != AlarmState.OUT_OF_SERVICE:
            raise illegal_transition(alarm, verb="return to service")
        return _leave(alarm, action="return_to_service", fallback=AlarmState.ACTIVE_UNACK, actor=actor, comment=comment)
