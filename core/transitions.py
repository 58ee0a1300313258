"""The one state-machine transition: a map of allowed moves, a locked row, a 409 naming the moves
allowed now, an audit record and a bus event. Drafts, plans, alarms and work orders use it.

An app declares its machine once, next to its choices::

    DRAFT_MACHINE = StateMachine("draft", DRAFT_TRANSITIONS)

and its `*_transition` service calls `transition(...)` (locks the row itself) or, when the caller
already holds the lock (lock order, several rows), `transition_locked(...)`. What differs between
machines is data: the audit action and details, the event, the fields a move also sets
(`on_move`). Side effects that only some moves have (queueing the next agent, closing effects)
stay in the app's service, after the call.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import models, transaction

from core.audit import audit_record
from core.errors import Conflict
from core.events import publish

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


# Hooks: `on_move(instance, move) -> extra field names to save`; `audit(move) -> (action, details)`;
# `event(move) -> (type, payload) | None`; `message(instance, to_state) -> str` for the 409.
OnMove = Callable[[Any, Move], Collection[str] | None]
AuditOf = Callable[[Move], tuple[str, dict[str, Any]]]
EventOf = Callable[[Move], tuple[str, dict[str, Any]] | None]
MessageOf = Callable[[Any, str], str]


def transition_locked(
    machine: StateMachine,
    instance: models.Model,
    to_state: str,
    *,
    actor: Any,
    target_type: str,
    audit: AuditOf,
    event: EventOf | None = None,
    on_move: OnMove | None = None,
    message: MessageOf | None = None,
    details: dict[str, Any] | None = None,
    save_fields: Collection[str] | None = None,
) -> Move:
    """Move a row the caller has locked (inside its transaction): check the map (409 with the
    allowed moves), set the state, let `on_move` set what the move also changes, save, write the
    audit record and publish the event (both in the caller's transaction).

    `save_fields`: save only these (plus the state and what `on_move` names); None saves the row."""
    state = str(getattr(instance, machine.state_field))
    if not machine.can(state, to_state):
        raise machine.illegal(state, to_state, message=message(instance, to_state) if message else None)
    move = Move(instance, state, str(to_state), dict(details or {}))
    setattr(instance, machine.state_field, to_state)
    extra = set(on_move(instance, move) or ()) if on_move else set()
    if save_fields is None:
        instance.save()
    else:
        instance.save(update_fields=sorted({machine.state_field, *save_fields, *extra}))
    action, audit_details = audit(move)
    audit_record(actor=actor, action=action, target_type=target_type, target_id=instance.pk, details=audit_details)
    if event is not None and (published := event(move)) is not None:
        publish(*published)
    return move


def transition(
    machine: StateMachine,
    queryset: models.QuerySet[Any],
    pk: Any,
    to_state: str,
    **kwargs: Any,
) -> Move:
    """`transition_locked` on the row `pk` of `queryset`, locked (SELECT … FOR UPDATE) in a
    transaction of its own (or the caller's, when one is open)."""
    with transaction.atomic():
        locked = queryset.select_for_update().get(pk=pk)
        return transition_locked(machine, locked, to_state, **kwargs)
