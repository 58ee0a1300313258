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

Frames are offered in rounds: what arrived since the last round goes to every consumer in one
`offer_many` call, and a consumer that opted in (`?batch=1`) writes a round as one WebSocket
message, straight to the server's send inside that call (core.direct_send: no task, no session
wrapper; ≈ 20 µs per socket on uvicorn, most of it the send system call). The channel layer hands
over one message per loop turn and none while a round is written, but everything committed
meanwhile is already in the outbox: after a round that took long the fan-out reads the outbox
past its cursor (one query, beside the next round, not in front of it). It pauses before the next
round (as long as the round took, at most ROUND_GAP_MAX) only when frames came in while it wrote:
a backlog, which the pause gathers into one round; otherwise the next event goes out at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connections

from core.events.transport import EVENTS_GROUP
from core.loops import cancel_and_wait
from core.models import Event
from core.models.events import event_frame

logger = logging.getLogger(__name__)

TAIL_BATCH = 500
RECENT_IDS = 20_000  # ids offered lately (the tail reads ~2 s behind the fast path)
GROUP_REFRESH_SECONDS = 3600.0  # channels-redis forgets group members after group_expiry (1 day)
ROUND_QUIET = 0.002  # a round cheaper than this is followed at once by the next
ROUND_GAP_MAX = 0.025  # the longest pause after a round (it adds at most this to a frame's latency)

EncodedFrame = tuple[dict[str, Any], str]  # the frame and its JSON text, encoded once per process


class Round(list[EncodedFrame]):
    """One round's frames, in arrival order, and what the consumers build from all of them once
    for every socket that takes the whole round (`built`: its WebSocket messages, their frames)."""

    def __init__(self, frames: list[EncodedFrame]) -> None:
        super().__init__(frames)
        self.built: dict[Any, Any] = {}


class FrameSink(Protocol):
    def offer_many(self, frames: list[EncodedFrame]) -> None: ...


def encode_frame(frame: dict[str, Any]) -> str:
    return json.dumps(frame, separators=(",", ":"))


def stored_events_after(after: int, limit: int) -> list[dict[str, Any]]:
    """Stored frames with id > after, in id order, at most `limit` (sync: call it in a thread)."""
    rows = Event.objects.filter(id__gt=after).order_by("id").values_list("id", "type", "payload", "created_at")
    return [event_frame(*row) for row in rows[:limit]]


def newest_event_id() -> int:
    """The outbox's newest id, 0 when empty (sync: call it in a thread)."""
    return Event.objects.order_by("-id").values_list("id", flat=True).first() or 0


def off_thread(read: Callable[..., Any]) -> Callable[..., Any]:
    """Run a database read (an outbox read, a socket check) in a worker thread, not on the one
    thread-sensitive thread (where a long chat turn may be running: the replay, the tail, the
    post-round read and a reconnecting socket's checks would wait for it), giving the thread's
    database connection back at once."""

    def run(*args: Any) -> Any:
        try:
            return read(*args)
        finally:
            connections.close_all()  # a pooled connection must not outlive the short-lived thread

    return database_sync_to_async(run, thread_sensitive=False)


@off_thread
def events_after(after: int, limit: int) -> list[dict[str, Any]]:
    """Stored frames with id > after, in id order, at most `limit`."""
    return stored_events_after(after, limit)


@off_thread
def latest_event_id() -> int:
    return newest_event_id()


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
        self._round: list[EncodedFrame] = []  # frames for the next round, in arrival order
        self._round_ready = asyncio.Event()
        self._cursor = 0  # the outbox is read past this id (by the tail, and after a heavy round)
        self._reading: asyncio.Task | None = None  # the outbox read after a heavy round
        self._read_again = False

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
                self._cursor = await latest_event_id()
                self._round, self._round_ready = [], asyncio.Event()
                self._tasks = [
                    asyncio.create_task(self._receive(layer)),
                    asyncio.create_task(self._tail(layer)),
                    asyncio.create_task(self._rounds()),
                ]

    async def unsubscribe(self, sink: FrameSink) -> None:
        async with self._lock:
            self.sinks.discard(sink)
            if self.sinks or self.channel is None:
                return
            channel, tasks = self.channel, self._tasks
            if self._reading is not None:
                tasks.append(self._reading)
            self.channel, self._tasks, self._reading = None, [], None
            await cancel_and_wait(tasks)  # the receive may drop one cancellation (core.loops)
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
        self._round.append((frame, encode_frame(frame)))
        self._round_ready.set()

    def _offer_round(self) -> None:
        """Hand every frame gathered since the last round to every consumer, in one call each."""
        frames, self._round = Round(self._round), []
        self._round_ready.clear()
        for sink in list(self.sinks):
            try:
                sink.offer_many(frames)
            except Exception:
                logger.exception("Offering events %s.. to a consumer failed", frames[0][0].get("id"))

    async def _rounds(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._round_ready.wait()
            started = loop.time()
            self._offer_round()
            await asyncio.sleep(0)  # consumers whose write had to wait (backpressure) go on
            spent = loop.time() - started
            if spent > ROUND_QUIET:
                # The fast path pops one message per loop turn and none while a round is written;
                # what piled up behind it is in the outbox already: one query brings it, beside
                # the next round (not before it: a query's few ms were in every heavy round's wait).
                self._read_outbox_soon()
                if self._round:  # frames came in while writing: a backlog, gather before the next
                    await asyncio.sleep(min(spent, ROUND_GAP_MAX))

    def _read_outbox_soon(self) -> None:
        """Start one outbox read past the cursor unless one is running (then it reads again)."""
        if self._reading is not None and not self._reading.done():
            self._read_again = True
            return
        self._read_again = False
        self._reading = asyncio.create_task(self._read_outbox_while_asked())

    async def _read_outbox_while_asked(self) -> None:
        await self._read_outbox()
        while self._read_again:
            self._read_again = False
            await self._read_outbox()

    async def _read_outbox(self) -> None:
        """Offer every stored event past the cursor (bounded batches); failures are logged."""
        try:
            while True:
                frames = await events_after(self._cursor, TAIL_BATCH)
                for frame in frames:
                    self._offer(frame)
                    self._cursor = max(self._cursor, frame["id"])
                if len(frames) < TAIL_BATCH:
                    return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            logger.warning("Events outbox read failed (%r)", exc)

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

    async def _tail(self, layer: Any) -> None:
        interval = float(getattr(settings, "ARIA_EVENTS_TAIL_SECONDS", 2.0))
        refreshed = time.monotonic()
        while True:
            await asyncio.sleep(interval if interval > 0 else GROUP_REFRESH_SECONDS)
            if time.monotonic() - refreshed > GROUP_REFRESH_SECONDS:
                with contextlib.suppress(Exception):
                    await layer.group_add(EVENTS_GROUP, self.channel)
                refreshed = time.monotonic()
            if interval > 0:
                await self._read_outbox()
