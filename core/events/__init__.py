"""The event bus: validated events written to the outbox, broadcast to WebSockets on commit."""

from core.events.bus import current_turn_id, new_turn_id, private_scope, publish, publish_many, turn_scope

__all__ = ["current_turn_id", "new_turn_id", "private_scope", "publish", "publish_many", "turn_scope"]
