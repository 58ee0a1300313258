"""WebSocket transport for the event bus: /ws/events?after=<id>.

Protocol (docs/EVENTS.md): the server accepts, then closes 4401 for an anonymous user and 4400
for an invalid `after`. Every frame is `{id, type, …payload}`. With `after`, stored events with a
greater id are replayed from the outbox in id order before live ones, with no gap and no
duplicate at the seam: the consumer joins the group first, buffers live frames while it
replays, then flushes the buffer, and from then on never sends an id twice. The consumer also
tails the outbox every ARIA_EVENTS_TAIL_SECONDS, so events that missed the fast path (published
by another process in embedded mode, or dropped by a full channel) still arrive.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from core.events.transport import EVENTS_GROUP, bind_server_loop
from core.models import Event

REPLAY_BATCH = 500
# Ids remembered for de-duplication; a frame older than the newest sent id minus this is dropped.
DEDUPE_WINDOW = 10_000
CLOSE_UNAUTHENTICATED = 4401
CLOSE_BAD_REQUEST = 4400


def parse_after(query_string: bytes) -> int | None:
    """`after` from the query string: None when absent; ValueError unless a non-negative integer."""
    values = parse_qs(query_string.decode("latin-1"), keep_blank_values=True).get("after")
    if not values:
        return None
    raw = values[-1].strip()
    if not raw.isdigit() or len(raw) > 19:
        raise ValueError(f"after must be a non-negative integer, got {raw!r}")
    return int(raw)


@database_sync_to_async
def _events_after(after: int, limit: int) -> list[dict[str, Any]]:
    rows = Event.objects.filter(id__gt=after).order_by("id").values("id", "type", "payload")[:limit]
    return [{"id": r["id"], "type": r["type"], **r["payload"]} for r in rows]


@database_sync_to_async
def _latest_event_id() -> int:
    return Event.objects.order_by("-id").values_list("id", flat=True).first() or 0


class EventsConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        bind_server_loop(asyncio.get_running_loop())
        self._joined = False
        self._pump: asyncio.Task | None = None
        await self.accept()
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        try:
            after = parse_after(self.scope.get("query_string", b""))
        except ValueError as exc:
            await self.send_json({"type": "error", "code": "invalid_after", "detail": str(exc)})
            await self.close(code=CLOSE_BAD_REQUEST)
            return
        self._sent: set[int] = set()
        self._buffer: list[dict[str, Any]] = []
        self._replaying = True
        # Join before reading the table: anything committed from here on is either in the
        # replay or in the buffer (or both; the id set removes the duplicate).
        await self.channel_layer.group_add(EVENTS_GROUP, self.channel_name)
        self._joined = True
        if after is None:
            after = await _latest_event_id()  # live only: start from the current end of the outbox
        self._floor = after  # ids at or below it are never sent: the client has them
        self._high = after  # the newest id sent (or the floor)
        self._pump = asyncio.create_task(self._run())

    async def disconnect(self, code: int) -> None:
        if getattr(self, "_pump", None) is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._pump
        if getattr(self, "_joined", False):
            await self.channel_layer.group_discard(EVENTS_GROUP, self.channel_name)

    async def bus_event(self, message: dict[str, Any]) -> None:
        """A live frame from the channel layer (type "bus.event")."""
        frame = message["frame"]
        if self._replaying:
            self._buffer.append(frame)
        else:
            await self._deliver(frame)

    async def _run(self) -> None:
        try:
            await self._catch_up()
            # Flush what arrived during the replay; no await between the empty check and the flag.
            while self._buffer:
                self._buffer.sort(key=lambda f: f["id"])
                pending, self._buffer = self._buffer, []
                for frame in pending:
                    await self._deliver(frame)
            self._replaying = False
            interval = float(getattr(settings, "ARIA_EVENTS_TAIL_SECONDS", 2.0))
            if interval <= 0:
                return
            while True:
                await asyncio.sleep(interval)
                await self._catch_up()
        except asyncio.CancelledError:
            raise
        except Exception:
            await self.close(code=1011)

    async def _catch_up(self) -> None:
        """Send every stored event newer than the newest sent id, in bounded batches."""
        while True:
            frames = await _events_after(self._high, REPLAY_BATCH)
            for frame in frames:
                await self._deliver(frame)
            if len(frames) < REPLAY_BATCH:
                return

    async def _deliver(self, frame: dict[str, Any]) -> None:
        event_id = frame["id"]
        if event_id <= self._floor or event_id in self._sent:
            return
        self._sent.add(event_id)
        if event_id > self._high:
            self._high = event_id
        if len(self._sent) > 2 * DEDUPE_WINDOW:
            self._floor = max(self._floor, self._high - DEDUPE_WINDOW)
            self._sent = {i for i in self._sent if i > self._floor}
        await self.send_json(frame)
