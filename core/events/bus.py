"""publish(): validate, write the outbox row in the caller's transaction, broadcast on commit.

Inside `private_scope(user_id, …)` every event published (an agent's start/end, thinking, tool
calls, renders — whatever the work inside causes in this thread) is private: one copy per user
named, each carrying that user's `owner_id`, and a copy reaches only its user's sockets, live and
replayed (core.events.stream). A user's own chat or coordinator turn runs in one: what they asked and
what the agents read for them is not everyone's to watch. An ask names its deciders too (the plan
owner and the approvers of a gated step): each gets their copy, nobody else any.
"""

from __future__ import annotations

import contextvars
import uuid
from contextlib import AbstractContextManager
from typing import Any

from django.db import transaction
from pydantic import ValidationError

from core.context_scopes import context_scope
from core.errors import InvalidInput
from core.events.contract import EVENT_TYPES
from core.events.transport import broadcast
from core.models import Event

current_turn_id: contextvars.ContextVar[str] = contextvars.ContextVar("aria_turn_id", default="")
# The users the events published now are private to (one copy each); empty: public.
current_audience: contextvars.ContextVar[tuple[int, ...]] = contextvars.ContextVar("aria_audience", default=())


def new_turn_id() -> str:
    return uuid.uuid4().hex


def turn_scope(turn_id: str | None = None) -> AbstractContextManager[str]:
    """Everything published inside carries this turn id unless it names its own."""
    return context_scope(current_turn_id, turn_id or new_turn_id())


def private_scope(*user_ids: int | None) -> AbstractContextManager[tuple[int, ...]]:
    """Events published inside are private to these users: one copy each, carrying that user's
    `owner_id` (only their sockets get it). None entries are skipped; no user at all: no change."""
    return context_scope(current_audience, tuple(dict.fromkeys(uid for uid in user_ids if uid is not None)))


def _validated(event_type: str, payload: dict[str, Any]) -> dict[str, Any]:
    model = EVENT_TYPES.get(event_type)
    if model is None:
        raise InvalidInput(f"Unknown event type {event_type!r}.", field="type")
    payload = dict(payload)
    if "turn_id" in model.model_fields and not payload.get("turn_id"):
        payload["turn_id"] = current_turn_id.get() or new_turn_id()
    try:
        data = model.model_validate(payload).model_dump(mode="json")
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first.get("loc", ())) or "payload"
        raise InvalidInput(f"Invalid {event_type} payload: {field}: {first.get('msg')}", field=field) from exc
    return data


def _copies(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The payloads to store: one per user of the private scope, else the payload itself (a type
    that names its own `owner_id` keeps it)."""
    audience = current_audience.get()
    if not audience or data.get("owner_id") is not None:
        return [data]
    return [{**data, "owner_id": user_id} for user_id in audience]


def publish(event_type: str, payload: dict[str, Any]) -> Event:
    """Validate against the contract, write the Event row, broadcast to WebSockets on commit.

    In a private scope of several users it writes a copy for each and returns the first's."""
    copies = _copies(_validated(event_type, payload))
    if len(copies) > 1:
        return _publish_rows(event_type, copies)[0]
    data = copies[0]
    event = Event.objects.create(type=event_type, payload=data, turn_id=data.get("turn_id", ""))
    frame = event.as_frame()
    transaction.on_commit(lambda: broadcast(frame))
    return event


def publish_many(event_type: str, payloads: list[dict[str, Any]]) -> list[Event]:
    """publish() for several events of one type: all validated first, one INSERT, broadcast in
    order on commit."""
    return _publish_rows(
        event_type, [copy for payload in payloads for copy in _copies(_validated(event_type, payload))]
    )


def _publish_rows(event_type: str, payloads: list[dict[str, Any]]) -> list[Event]:
    """Write already validated payloads with one INSERT and broadcast them in order on commit."""
    rows = [Event(type=event_type, payload=data, turn_id=data.get("turn_id", "")) for data in payloads]
    events = Event.objects.bulk_create(rows)
    frames = [event.as_frame() for event in events]

    def broadcast_all() -> None:
        for frame in frames:
            broadcast(frame)

    transaction.on_commit(broadcast_all)
    return events
