"""Helpers shared by the alarm services: locking, the transition check (the kernel's state machine,
core.transitions), the AlarmEvent + audit pair (alarm moves are bulk as well as single, so the
append-only AlarmEvent rows are written here, one audit record each)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from core.audit import audit_record
from core.errors import Conflict
from core.transitions import StateMachine
from sentinel.choices import ALARM_TRANSITIONS
from sentinel.models import Alarm, AlarmEvent

AUDIT_TARGET = "sentinel.alarm"
# The kernel's transition check (core.transitions): the 409 lists the allowed states and the current one.
ALARM_MACHINE = StateMachine("alarm", ALARM_TRANSITIONS, state_field="state")


def lock_alarm(alarm: Alarm | int) -> Alarm:
    """Re-read the alarm under a row lock (the caller holds a transaction). `of=self`: the alarm
    row only — a plain FOR UPDATE over the join would also lock the signal and the cell (the
    work-order intake lock), out of the lock order in docs/KERNEL.md."""
    pk = alarm.pk if isinstance(alarm, Alarm) else int(alarm)
    return Alarm.objects.select_for_update(of=("self",)).select_related("signal__cell").get(pk=pk)


def illegal_transition(alarm: Alarm, *, verb: str) -> Conflict:
    """The 409 for a move the transition map forbids; `allowed` lists the states reachable now."""
    return ALARM_MACHINE.illegal(alarm.state, "", message=f"Alarm #{alarm.pk} is {alarm.state}; cannot {verb}.")


def check_transition(alarm: Alarm, to_state: str, *, verb: str) -> None:
    if not ALARM_MACHINE.can(alarm.state, to_state):
        raise illegal_transition(alarm, verb=verb)


def _actor(actor: AbstractBaseUser | None) -> AbstractBaseUser | None:
    return actor if actor is not None and getattr(actor, "is_authenticated", False) else None


def event_for(
    alarm: Alarm,
    *,
    from_state: str,
    to_state: str,
    actor: AbstractBaseUser | None,
    comment: str = "",
    details: dict[str, Any] | None = None,
) -> AlarmEvent:
    """An unsaved AlarmEvent (callers save one or bulk-create many)."""
    return AlarmEvent(
        alarm=alarm,
        from_state=from_state,
        to_state=to_state,
        actor=_actor(actor),
        comment=(comment or "")[:500],
        details=details or {},
    )


def record_events(events: Iterable[AlarmEvent], *, action: str) -> list[AlarmEvent]:
    """Write the append-only alarm events and one audit record for each."""
    events = AlarmEvent.objects.bulk_create(list(events))
    for event in events:
        audit_record(
            actor=event.actor,
            action=f"alarm.{action}",
            target_type=AUDIT_TARGET,
            target_id=event.alarm_id,
            details={
                "from_state": event.from_state,
                "to_state": event.to_state,
                "comment": event.comment,
                **event.details,
            },
        )
    return events


def record_event(
    alarm: Alarm,
    *,
    action: str,
    from_state: str,
    to_state: str,
    actor: AbstractBaseUser | None,
    comment: str = "",
    details: dict[str, Any] | None = None,
) -> AlarmEvent:
    event = event_for(alarm, from_state=from_state, to_state=to_state, actor=actor, comment=comment, details=details)
    return record_events([event], action=action)[0]
