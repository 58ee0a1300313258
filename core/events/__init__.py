"""The event bus: validated events written to the outbox, broadcast to WebSockets on commit."""

from core.events.audience import scope_holder_ids
from core.events.bus import current_turn_id, new_turn_id, private_scope, publish, publish_many, turn_scope

__all__ = [
    "current_turn_id",
    "new_turn_id",
    "private_scope",
    "publish",
    "publish_many",
    "scope_holder_ids",
    "turn_scope",
]
