"""publish(): validate, write the outbox row in the caller's transaction, broadcast on commit.

Inside `private_scope(user_id)` every event published (an agent's start/end, thinking, tool
calls, renders — whatever the work inside causes in this thread) carries `owner_id` and reaches
only that user's sockets, live and replayed (core.consumers). A user's own chat or coordinator
turn runs in one: what they asked and what the agents read for them is not everyone's to watch.
"""

from __future__ import annotations

import contextlib
import contextvars
import uuid
from collections.abc import Iterator
from typing import Any

from django.db import transaction
from pydantic import ValidationError

from core.errors import InvalidInput
from core.events.contract import EVENT_TYPES
from core.events.transport import broadcast
from core.models import Event

current_turn_id: contextvars.ContextVar[str] = contextvars.ContextVar("aria_turn_id", default="")
current_private_owner: contextvars.ContextVar[int | None] = contextvars.ContextVar("aria_private_owner", default=None)


def new_turn_id() -> str:
    return uuid.uuid4().hex


@contextlib.contextmanager
def turn_scope(turn_id: str | None = None) -> Iterator[str]:
    """Everything published inside carries this turn id unless it names its own."""
    turn_id = turn_id or new_turn_id()
    token = current_turn_id.set(turn_id)
    try:
        yield turn_id
    finally:
        current_turn_id.reset(token)


@contextlib.contextmanager
def private_scope(owner_id: int | None) -> Iterator[int | None]:
    """Events published inside carry `owner_id` (only that user's sockets get them); None: no change."""
    if owner_id is None:
        yield current_private_owner.get()
        return
    token = current_private_owner.set(owner_id)
    try:
        yield owner_id
    finally:
        current_private_owner.reset(token)


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
    owner = current_private_owner.get()
    if owner is not None and data.get("owner_id") is None:
        data["owner_id"] = owner
    return data


def publish(event_type: str, payload: dict[str, Any]) -> Event:
    """Validate against the contract, write the Event row, broadcast to WebSockets on commit."""
    data = _validated(event_type, payload)
    event = Event.objects.create(type=event_type, payload=data, turn_id=data.get("turn_id", ""))
    frame = event.as_frame()
    transaction.on_commit(lambda: broadcast(frame))
    return event


def publish_many(event_type: str, payloads: list[dict[str, Any]]) -> list[Event]:
    """publish() for several events of one type: all validated first, one INSERT, broadcast in
    order on commit."""
    rows = [Event(type=event_type, payload=data, turn_id=data.get("turn_id", "")) for data in (
        _validated(event_type, payload) for payload in payloads
    )]  # fmt: skip
    events = Event.objects.bulk_create(rows)
    frames = [event.as_frame() for event in events]

    def broadcast_all() -> None:
        for frame in frames:
            broadcast(frame)

    transaction.on_commit(broadcast_all)
    return events
