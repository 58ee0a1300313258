"""WebSocket transport for the event bus: /ws/events?after=<id>.

Protocol (docs/EVENTS.md): the server accepts, then closes 4401 for an anonymous user and 4400
for an invalid `after`. Every frame is `{id, type, …payload}`. With `after`, stored events with a
greater id are replayed from the outbox in id order before live ones, with no gap and no
duplicate at the seam: the consumer subscribes to the live stream first (through the process's
EventFanout), queues live frames while it replays, then flushes the queue, and never sends an id
twice. Live frames come from the channel layer and from the fan-out's outbox tail.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any
from urllib.parse import parse_qs

from channels.generic.websocket import AsyncJsonWebsocketConsumer

from core.events.fanout import EventFanout, encode_frame, events_after, latest_event_id
from core.events.transport import bind_server_loop

REPLAY_BATCH = 500
# Ids remembered for de-duplication; a frame older than the newest sent id minus this is dropped.
DEDUPE_WINDOW = 10_000
# Live frames queued per socket; beyond it they are dropped and re-read from the outbox.
QUEUE_LIMIT = 10_000
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


class EventsConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        bind_server_loop(asyncio.get_running_loop())
        self._fanout: EventFanout | None = None
        self._pump: asyncio.Task | None = None
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.accept()
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        try:
            after = parse_after(self.scope.get("query_string", b""))
        except ValueError as exc:
            await self.accept()
            await self.send_json({"type": "error", "code": "invalid_after", "detail": str(exc)})
            await self.close(code=CLOSE_BAD_REQUEST)
            return
        self._sent: set[int] = set()
        self._queue: asyncio.Queue[tuple[dict[str, Any], str]] = asyncio.Queue()
        self._overflowed = False
        # Subscribe before reading the table: anything committed from here on is either in the
        # replay or in the queue (or both; the id set removes the duplicate).
        self._fanout = EventFanout.current()
        await self._fanout.subscribe(self)
        if after is None:
            after = await latest_event_id()  # live only: start from the current end of the outbox
        self._floor = after  # ids at or below it are never sent: the client has them
        self._high = after  # the newest id sent (or the floor)
        # Accept only once subscribed: a client that sees the socket open misses nothing live.
        await self.accept()
        self._pump = asyncio.create_task(self._run())

    async def disconnect(self, code: int) -> None:
        if getattr(self, "_fanout", None) is not None:
            await self._fanout.unsubscribe(self)
        if getattr(self, "_pump", None) is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._pump

    def offer(self, frame: dict[str, Any], text: str) -> None:
        """A live frame from the fan-out (channel layer or outbox tail); queued, never awaited."""
        if self._queue.qsize() >= QUEUE_LIMIT:
            self._overflowed = True  # the pump re-reads the outbox instead
            return
        self._queue.put_nowait((frame, text))

    async def _run(self) -> None:
        try:
            await self._catch_up()
            # Flush what arrived during the replay, in id order.
            pending = []
            while not self._queue.empty():
                pending.append(self._queue.get_nowait())
            for frame, text in sorted(pending, key=lambda item: item[0]["id"]):
                await self._deliver(frame, text)
            while True:
                frame, text = await self._queue.get()
                await self._deliver(frame, text)
                if self._overflowed:
                    self._overflowed = False
                    await self._catch_up()
        except asyncio.CancelledError:
            raise
        except Exception:
            await self.close(code=1011)

    async def _catch_up(self) -> None:
        """Send every stored event newer than the newest sent id, in bounded batches."""
        while True:
            frames = await events_after(self._high, REPLAY_BATCH)
            for frame in frames:
                await self._deliver(frame, None)
            if len(frames) < REPLAY_BATCH:
                return

    async def _deliver(self, frame: dict[str, Any], text: str | None) -> None:
        event_id = frame["id"]
        if event_id <= self._floor or event_id in self._sent:
            return
        self._sent.add(event_id)
        if event_id > self._high:
            self._high = event_id
        if len(self._sent) > 2 * DEDUPE_WINDOW:
            self._floor = max(self._floor, self._high - DEDUPE_WINDOW)
            self._sent = {i for i in self._sent if i > self._floor}
        await self.send(text_data=text if text is not None else encode_frame(frame))
