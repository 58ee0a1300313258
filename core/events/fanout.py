"""One events-group member per server process, fanning frames out to its /ws/events consumers.

With a consumer per socket in the group, channels-redis moves every frame once per client
through Redis and the server pops them one by one: 100 clients × 30 events/s is 3,000 pops/s
before a byte reaches a socket. Here the process joins the group once; each frame arrives once,
is serialised once, and is offered to every local consumer in memory. The same object tails the
outbox every ARIA_EVENTS_TAIL_SECONDS (one query per process, not per client), so events that
missed the fast path — published by another process in embedded mode, or dropped by a full
channel — still reach the sockets. The layer is still Channels' (in-memory or channels-redis).

Each event is offered to the consumers once: the fan-out remembers the ids it offered lately, so
the tail passes on only what the fast path missed (and a fast-path frame the tail already brought
is not offered again). Before, every event reached every consumer twice — live, then again from
the tail two seconds later — and each consumer's pump woke for the duplicate only to drop it:
at 500 clients × 25 events/s that was 12,500 wasted wake-ups a second on the server's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import weakref
from collections import deque
from typing import Any, Protocol

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings

from core.events.transport import EVENTS_GROUP
from core.models import Event
from core.models.events import event_frame

logger = logging.getLogger(__name__)

TAIL_BATCH = 500
RECENT_IDS = 20_000  # ids offered lately (the tail reads ~2 s behind the fast path)
GROUP_REFRESH_SECONDS = 3600.0  # channels-redis forgets group members after group_expiry (1 day)


class FrameSink(Protocol):
    def offer(self, frame: dict[str, Any], text: str) -> None: ...


def encode_frame(frame: dict[str, Any]) -> str:
    return json.dumps(frame, separators=(",", ":"))


@database_sync_to_async
def events_after(after: int, limit: int) -> list[dict[str, Any]]:
    """Stored frames with id > after, in id order, at most `limit`."""
    rows = Event.objects.filter(id__gt=after).order_by("id").values_list("id", "type", "payload", "created_at")
    return [event_frame(*row) for row in rows[:limit]]


@database_sync_to_async
def latest_event_id() -> int:
    return Event.objects.order_by("-id").values_list("id", flat=True).first() or 0


class EventFanout:
    """Per event loop: the group membership, the receive loop and the outbox tail."""

    _by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, EventFanout] = weakref.WeakKeyDictionary()

    def __init__(self) -> None:
        self.sinks: set[FrameSink] = set()
        self.channel: str | None = None
        self._tasks: list[asyncio.Task] = []
        self._lock = asyncio.Lock()
        self._offered: set[int] = set()
        self._offered_order: deque[int] = deque()

    @classmethod
    def current(cls) -> EventFanout:
        loop = asyncio.get_running_loop()
        fanout = cls._by_loop.get(loop)
        if fanout is None:
            fanout = cls._by_loop[loop] = cls()
        return fanout

    async def subscribe(self, sink: FrameSink) -> None:
        """Frames sent to the group after this returns are offered to `sink`."""
        async with self._lock:
            self.sinks.add(sink)
            if self.channel is None:
                layer = get_channel_layer()
                self.channel = await layer.new_channel()
                await layer.group_add(EVENTS_GROUP, self.channel)
                cursor = await latest_event_id()
                self._tasks = [
                    asyncio.create_task(self._receive(layer)),
                    asyncio.create_task(self._tail(layer, cursor)),
                ]

    async def unsubscribe(self, sink: FrameSink) -> None:
        async with self._lock:
            self.sinks.discard(sink)
            if self.sinks or self.channel is None:
                return
            channel, tasks = self.channel, self._tasks
            self.channel, self._tasks = None, []
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            with contextlib.suppress(Exception):
                await get_channel_layer().group_discard(EVENTS_GROUP, channel)

    def _first_offer(self, event_id: int) -> bool:
        """True the first time `event_id` is offered (within the last RECENT_IDS offers)."""
        if event_id in self._offered:
            return False
        self._offered.add(event_id)
        self._offered_order.append(event_id)
        if len(self._offered_order) > RECENT_IDS:
            self._offered.discard(self._offered_order.popleft())
        return True

    def _offer(self, frame: dict[str, Any]) -> None:
        if not self._first_offer(frame["id"]):
            return  # already offered: every consumer queued it, or re-reads the outbox itself
        text = encode_frame(frame)
        for sink in list(self.sinks):
            try:
                sink.offer(frame, text)
            except Exception:
                logger.exception("Offering event %s to a consumer failed", frame.get("id"))

    async def _receive(self, layer: Any) -> None:
        channel = self.channel
        while True:
            try:
                message = await layer.receive(channel)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # e.g. Redis restarting: the tail covers the gap
                logger.warning("Events fan-out receive failed (%r); retrying", exc)
                await asyncio.sleep(1.0)
                with contextlib.suppress(Exception):
                    await layer.group_add(EVENTS_GROUP, channel)
                continue
            frame = message.get("frame")
            if isinstance(frame, dict) and isinstance(frame.get("id"), int):
                self._offer(frame)

    async def _tail(self, layer: Any, cursor: int) -> None:
        interval = float(getattr(settings, "ARIA_EVENTS_TAIL_SECONDS", 2.0))
        refreshed = time.monotonic()
        while True:
            await asyncio.sleep(interval if interval > 0 else GROUP_REFRESH_SECONDS)
            if time.monotonic() - refreshed > GROUP_REFRESH_SECONDS:
                with contextlib.suppress(Exception):
                    await layer.group_add(EVENTS_GROUP, self.channel)
                refreshed = time.monotonic()
            if interval <= 0:
                continue
            try:
                while True:
                    frames = await events_after(cursor, TAIL_BATCH)
                    for frame in frames:
                        self._offer(frame)
                        cursor = frame["id"]
                    if len(frames) < TAIL_BATCH:
                        break
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                logger.warning("Events outbox tail failed (%r)", exc)
