"""Fast path from the outbox to WebSocket consumers through the Channels layer (at-most-once)."""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)

EVENTS_GROUP = "aria.events"


def broadcast(frame: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(EVENTS_GROUP, {"type": "bus.event", "frame": frame})
    except Exception:  # the outbox holds the event; clients catch up with ?after=
        logger.exception("Broadcast of event %s failed", frame.get("id"))
