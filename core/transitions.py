"""The one state-machine transition: a map of allowed moves, a locked row, a 409 naming the moves
allowed now, an audit record and a bus event. Drafts, plans, alarms and work orders use it.

An app declares its machine once, next to its choices::

    DRAFT_MACHINE = StateMachine("draft", DRAFT_TRANSITIONS)

and its `*_transition` service calls `transition(...)` (locks the row itself) or, when the caller
already holds the lock (lock order), `transition_locked(...)`; several rows moving to one state at
once (the alarm detector's clears) take `lock_rows(...)` (pk order) and `transition_locked_many(...)`,
a constant number of queries whatever their number. What differs between machines is data: the
audit action and details, the app's history row, the bus event, the fields a move also sets
(`on_move`). Side effects that only some moves have (queueing the next agent, closing effects)
stay in the app's service, after the call.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any, TypeVar

from django.db import models, transaction

from core.audit import AuditEntry, audit_record_many
from core.errors import Conflict
from core.events import publish_many

M = TypeVar("M", bound=models.Model)

ILLEGAL_TRANSITION = "illegal_transition"


@dataclass(frozen=True)
class StateMachine:
    """`moves[state]` are the states reachable from `state`; `state_field` is the model field.

    `request_field` names the request field a 409 blames (e.g. `to_status`), if the API has one;
    the 409 body always carries `allowed` (the moves legal now) and the current state under
    `state_field`'s name."""

    name: str
    moves: Mapping[str, Collection[str]]
    state_field: str = "status"
    request_field: str | None = None
    sort_allowed: bool = True  # False: `allowed` keeps the map's order (e.g. the usual next step first)

    def allowed(self, state: str) -> list[str]:
        moves = [str(s) for s in self.moves.get(state, ())]
        return sorted(moves) if self.sort_allowed else moves

    def can(self, state: str, to_state: str) -> bool:
        return to_state in self.moves.get(state, ())

    def illegal(self, state: str, to_state: str, *, message: str | None = None) -> Conflict:
        """The 409 for a move the map forbids."""
        extra: dict[str, Any] = {"allowed": self.allowed(state), self.state_field: state}
        return Conflict(
            message or f"Cannot move a {state} {self.name} to {to_state}.",
            field=self.request_field,
            code=ILLEGAL_TRANSITION,
            **extra,
        )

    def check(self, state: str, to_state: str, *, message: str | None = None) -> None:
        if not self.can(state, to_state):
            raise self.illegal(state, to_state, message=message)


@dataclass
class Move:
    """One transition as it happened: the row (saved), where it came from, where it went."""

    instance: models.Model
    from_state: str
    to_state: str
    details: dict[str, Any] = field(default_factory=dict)


# Hooks: `on_move(instance, move) -> extra field names to save` (it may add to `move.details`);
# `audit(move) -> (action, details)`; `history(move) -> an unsaved row of the app's own history
# table (AlarmEvent, …) | None`; `event(move) -> (type, payload) | None` for the bus;
# `message(instance, to_state) -> str` for the 409.
OnMove = Callable[[Any, Move], Collection[str] | None]
AuditOf = Callable[[Move], tuple[str, dict[str, Any]]]
HistoryOf = Callable[[Move], models.Model | None]
EventOf = Callable[[Move], tuple[str, dict[str, Any]] | None]
MessageOf = Callable[[Any, str], str]


def record_moves(
    moves: Sequence[Move],
    *,
    actor: Any,
    target_type: str,
    audit: AuditOf,
    history: HistoryOf | None = None,
    event: EventOf | None = None,
) -> None:
    """The record of moves whose rows are saved: the app's history rows (one INSERT per model),
    one audit record each (one chain append) and the bus events (one INSERT per run of one type),
    in the caller's transaction — a constant number of queries whatever the number of moves.

    `transition_locked` and `transition_locked_many` end with it; an app calls it on its own for
    what it records like a move but that changes no state (a row created in its first state, an
    escalation within one state)."""
    if not moves:
        return
    if history is not None:
        rows = [row for row in map(history, moves) if row is not None]
        for model in dict.fromkeys(type(row) for row in rows):
            model._default_manager.bulk_create([row for row in rows if type(row) is model])
    entries = []
    for move in moves:
        action, details = audit(move)
        entries.append(AuditEntry(actor, action, target_type, move.instance.pk, details))
    audit_record_many(entries)
    if event is not None:
        published = [e for e in map(event, moves) if e is not None]
        for event_type, run in groupby(published, key=lambda e: e[0]):
            publish_many(event_type, [payload for _, payload in run])


def _refuse_illegal(machine: StateMachine, instances: Iterable[Any], to_state: str, message: MessageOf | None) -> None:
    for instance in instances:
        state = str(getattr(instance, machine.state_field))
        if not machine.can(state, to_state):
            raise machine.illegal(state, to_state, message=message(instance, to_state) if message else None)


def transition_locked(
    machine: StateMachine,
    instance: models.Model,
    to_state: str,
    *,
    actor: Any,
    target_type: str,
    audit: AuditOf,
    history: HistoryOf | None = None,
    event: EventOf | None = None,
    on_move: OnMove | None = None,
    message: MessageOf | None = None,
    details: dict[str, Any] | None = None,
    save_fields: Collection[str] | None = None,
) -> Move:
    """Move a row the caller has locked (inside its transaction): check the map (409 with the
    allowed moves), set the state, let `on_move` set what the move also changes, save, write the
    history row, the audit record and the bus event (`record_moves`, in the caller's transaction).

    `save_fields`: save only these (plus the state and what `on_move` names); None saves the row."""
    _refuse_illegal(machine, [instance], to_state, message)
    move = Move(instance, str(getattr(instance, machine.state_field)), str(to_state), dict(details or {}))
    setattr(instance, machine.state_field, to_state)
    extra = set(on_move(instance, move) or ()) if on_move else set()
    if save_fields is None:
        instance.save()
    else:
        instance.save(update_fields=sorted({machine.state_field, *save_fields, *extra}))
    record_moves([move], actor=actor, target_type=target_type, audit=audit, history=history, event=event)
    return move


def transition_locked_many(
    machine: StateMachine,
    instances: Sequence[M],
    to_state: str,
    *,
    actor: Any,
    target_type: str,
    audit: AuditOf,
    history: HistoryOf | None = None,
    event: EventOf | None = None,
    on_move: OnMove | None = None,
    message: MessageOf | None = None,
    details: dict[str, Any] | None = None,
    save_fields: Collection[str] = (),
) -> list[Move]:
    """`transition_locked` for several rows of one model moving to one state, all locked by the
    caller (`lock_rows`: pk order, docs/KERNEL.md "Lock order"), with a constant number of queries:
    every move is checked before anything is written (one illegal move → its 409, nothing saved),
    the rows are saved with one `bulk_update` (the state, `save_fields`, what `on_move` names and
    the model's auto_now fields; no `save()` signals), then `record_moves`."""
    if not instances:
        return []
    _refuse_illegal(machine, instances, to_state, message)
    moves = []
    fields = {machine.state_field, *save_fields}
    for instance in instances:
        move = Move(instance, str(getattr(instance, machine.state_field)), str(to_state), dict(details or {}))
        setattr(instance, machine.state_field, to_state)
        fields.update((on_move(instance, move) or ()) if on_move else ())
        moves.append(move)
    model = type(instances[0])
    touched = [f for f in model._meta.concrete_fields if getattr(f, "auto_now", False)]
    for instance in instances:
        for auto in touched:
            auto.pre_save(instance, add=False)
    model._default_manager.bulk_update(instances, sorted(fields | {f.name for f in touched}))
    record_moves(moves, actor=actor, target_type=target_type, audit=audit, history=history, event=event)
    return moves


def lock_rows(queryset: models.QuerySet[M], pks: Iterable[Any]) -> list[M]:
    """The rows `pks` of `queryset`, locked (FOR UPDATE OF the model's own table, not the joined
    ones) in pk order — the order within a kind every transaction takes (docs/KERNEL.md)."""
    return list(queryset.select_for_update(of=("self",)).filter(pk__in=list(pks)).order_by("pk"))


def transition(
    machine: StateMachine,
    queryset: models.QuerySet[Any],
    pk: Any,
    to_state: str,
    **kwargs: Any,
) -> Move:
    """`transition_locked` on the row `pk` of `queryset`, locked (FOR UPDATE OF its own table) in a
    transaction of its own (or the caller's, when one is open)."""
    with transaction.atomic():
        locked = queryset.select_for_update(of=("self",)).get(pk=pk)
        return transition_locked(machine, locked, to_state, **kwargs)
