"""The alarm machine and how its moves are recorded, on the kernel's transition helper
(core.transitions): every alarm move — an operator's on one row, the detector's on many — is
checked, saved and recorded there (an append-only AlarmEvent and an audit record per move); what
the detector records without a state change (a raise, an escalation, chatter) goes through the
same record step (`alarm_record`).

Lock order (docs/KERNEL.md): alarms in pk order (`lock_alarms`), before the cell and work-order rows.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from django.contrib.auth.models import AbstractBaseUser

from core.access import stored_user
from core.errors import Conflict
from core.events import publish_many
from core.events.contract import _Payload, register_event_type
from core.transitions import (
    MessageOf,
    Move,
    OnMove,
    StateMachine,
    lock_rows,
    record_moves,
    transition_locked,
    transition_locked_many,
)
from sentinel.choices import ALARM_TRANSITIONS, AlarmState
from sentinel.models import Alarm, AlarmEvent

AUDIT_TARGET = "sentinel.alarm"
# The operator's and the detector's map: the 409 lists the allowed states and the current one.
ALARM_MACHINE = StateMachine("alarm", ALARM_TRANSITIONS, state_field="state")
# Unshelve and return to service restore the state the alarm had (ISA-18.2), or clear it: shelved →
# acknowledged is such a restore, a move ALARM_MACHINE does not offer (acknowledging a shelved alarm
# is refused). Those two verbs check their own precondition against ALARM_MACHINE (its 409), then
# move along this map.
ALARM_RETURN_MACHINE = StateMachine(
    "alarm",
    {
        AlarmState.SHELVED: frozenset({AlarmState.ACTIVE_UNACK, AlarmState.ACKNOWLEDGED, AlarmState.CLEARED}),
        AlarmState.OUT_OF_SERVICE: frozenset({AlarmState.ACTIVE_UNACK, AlarmState.CLEARED}),
    },
    state_field="state",
)


def lock_alarm(alarm: Alarm | int) -> Alarm:
    """Re-read the alarm under a row lock (the caller holds a transaction). `of=self`: the alarm
    row only — a plain FOR UPDATE over the join would also lock the signal and the cell (the
    work-order intake lock), out of the lock order in docs/KERNEL.md."""
    pk = alarm.pk if isinstance(alarm, Alarm) else int(alarm)
    return Alarm.objects.select_for_update(of=("self",)).select_related("signal__cell").get(pk=pk)


def lock_alarms(pks: Iterable[int], *, states: Collection[str]) -> list[Alarm]:
    """The alarms `pks` still in one of `states`, locked in pk order (the rest are skipped)."""
    return lock_rows(Alarm.objects.filter(state__in=list(states)), pks)


def illegal_transition(alarm: Alarm, *, verb: str) -> Conflict:
    """The 409 for a move the transition map forbids; `allowed` lists the states reachable now."""
    return ALARM_MACHINE.illegal(alarm.state, "", message=_refusal(verb)(alarm, ""))


def _refusal(verb: str) -> MessageOf:
    return lambda alarm, _to_state: f"Alarm #{alarm.pk} is {alarm.state}; cannot {verb}."


def actor_or_none(actor: AbstractBaseUser | None) -> AbstractBaseUser | None:
    return actor if actor is not None and getattr(actor, "is_authenticated", False) else None


@dataclass(frozen=True)
class _Recording:
    """One call's record of its moves: who, the audit action (`alarm.<action>`), the comment;
    each move's own facts are in `move.details`."""

    action: str
    actor: AbstractBaseUser | None
    comment: str = ""

    def history(self, move: Move) -> AlarmEvent:
        return AlarmEvent(
            alarm_id=move.instance.pk,
            from_state=move.from_state,
            to_state=move.to_state,
            actor=stored_user(self.actor),
            comment=self.comment[:500],
            details=move.details,
        )

    def audit(self, move: Move) -> tuple[str, dict[str, Any]]:
        details = {"from_state": move.from_state, "to_state": move.to_state, "comment": self.comment[:500]}
        return f"alarm.{self.action}", {**details, **move.details}

    def hooks(self) -> dict[str, Any]:
        return {"actor": self.actor, "target_type": AUDIT_TARGET, "audit": self.audit, "history": self.history}


ALARM_CHANGED = "alarm_changed"


class AlarmChanged(_Payload):
    """Bus payload (docs/EVENTS.md): a person moved an alarm (acknowledge, shelve, unshelve, out of
    service, return to service), its shelve ran out, or detection raised (from_state ""), escalated
    or cleared it — so every Control Room shows it at once."""

    alarm_id: int
    signal_def_id: int
    from_state: str
    to_state: str
    action: str


def register_alarm_events() -> None:
    register_event_type(ALARM_CHANGED, AlarmChanged)


def alarms_changed(moves: Sequence[Move], *, action: str) -> None:
    """Announce the moves (one INSERT, in the caller's transaction: sent only if it commits)."""
    if not moves:
        return
    alarms = [cast(Alarm, m.instance) for m in moves]
    publish_many(
        ALARM_CHANGED,
        [
            {"alarm_id": a.pk, "signal_def_id": a.signal_id, "from_state": m.from_state, "to_state": m.to_state,
             "action": action}
            for a, m in zip(alarms, moves, strict=True)
        ],
    )  # fmt: skip


def alarm_move(
    alarm: Alarm,
    to_state: str,
    *,
    action: str,
    verb: str,
    actor: AbstractBaseUser | None,
    comment: str = "",
    details: dict[str, Any] | None = None,
    on_move: OnMove | None = None,
    machine: StateMachine = ALARM_MACHINE,
) -> Move:
    """Move one locked alarm (core.transitions.transition_locked): 409 "Alarm #n is s; cannot
    <verb>." with the allowed states, the state and what `on_move` sets saved, the AlarmEvent and
    the audit record `alarm.<action>` written, and `alarm_changed` published."""
    recording = _Recording(action, actor_or_none(actor), comment or "")
    move = transition_locked(
        machine,
        alarm,
        to_state,
        details=details,
        on_move=on_move,
        message=_refusal(verb),
        save_fields=(),
        **recording.hooks(),
    )
    alarms_changed([move], action=action)
    return move


def alarm_move_many(
    alarms: Sequence[Alarm],
    to_state: str,
    *,
    action: str,
    verb: str,
    on_move: OnMove | None = None,
    actor: AbstractBaseUser | None = None,
    comment: str = "",
    machine: StateMachine = ALARM_MACHINE,
) -> list[Move]:
    """Move alarms locked by `lock_alarms` to one state with a constant number of queries
    (core.transitions.transition_locked_many); `on_move` sets each one's fields and details."""
    recording = _Recording(action, actor_or_none(actor), comment or "")
    return transition_locked_many(
        machine, alarms, to_state, on_move=on_move, message=_refusal(verb), **recording.hooks()
    )


def alarm_record(
    moves: Sequence[Move], *, action: str, actor: AbstractBaseUser | None = None, comment: str = ""
) -> None:
    """Record what changes no state like a move (core.transitions.record_moves): a raise (from ""),
    an escalation or chatter (from a state to itself), one AlarmEvent and one audit record each."""
    record_moves(moves, **_Recording(action, actor_or_none(actor), comment or "").hooks())
