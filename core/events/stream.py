"""WebSocket transport for the event bus: /ws/events?after=<id> (EventsConsumer, on SessionBoundConsumer,
core/consumers.py).

Protocol (docs/EVENTS.md): the server accepts, then closes 4401 for an anonymous user and 4400
for an invalid `after`; an open socket closes 4401/4403 when its session, token or scope ends
(SessionBoundConsumer; core.sockets, core.socket_auth). Every frame is `{id, type, …payload}`.
With `after`, stored events with a greater id are replayed from the outbox in id order before live
ones, with no gap and no duplicate at the seam: the consumer subscribes to the live stream first
(through the process's EventFanout), queues live frames while it replays, then flushes the queue,
and never sends an id twice. Live frames come from the channel layer and from the fan-out's outbox tail.

With `batch=1` a client accepts several events in one WebSocket message (a JSON array, in
delivery order): the frames queued for a socket when it is written, and the replay's batches.
One message per socket instead of one per event is what lets one process serve hundreds of
sockets (bench/event_bus.py). Every event is filtered per socket before it joins a message, so a
private event never rides in another user's array. While nothing is queued for a socket, the
fan-out's round is filtered and written to it inside `offer_many`, straight to the server's send
(core.direct_send) — on uvicorn, a socket that takes the whole round gets the round's frames,
built once for every such socket, written to its transport as they are. The pump task wakes only
for the replay, a write that had to wait for the client (backpressure: what follows queues behind
it, in order) and an overflow.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Sequence
from functools import partial
from typing import Any
from urllib.parse import parse_qs

from channels.consumer import get_handler_name

from core import direct_send
from core.access import SCOPES
from core.consumers import SessionBoundConsumer
from core.events import fanout as outbox
from core.events.fanout import EncodedFrame, EventFanout, Round, encode_frame, events_after
from core.events.transport import bind_server_loop

logger = logging.getLogger(__name__)

REPLAY_BATCH = 500
# One WebSocket message carries events up to about this many characters (a larger event goes alone).
MESSAGE_CHARS = 128 * 1024
# Ids remembered for de-duplication; a frame older than the newest sent id minus this is dropped.
DEDUPE_WINDOW = 10_000
# Live frames queued per socket; beyond it they are dropped and re-read from the outbox.
QUEUE_LIMIT = 10_000
CLOSE_BAD_REQUEST = 4400
__all__ = ["CLOSE_BAD_REQUEST", "EventsConsumer", "parse_after", "parse_batch"]


def parse_batch(query_string: bytes) -> bool:
    """`batch` from the query string: absent or 0 → one event per message, 1 → arrays allowed."""
    values = parse_qs(query_string.decode("latin-1"), keep_blank_values=True).get("batch")
    if not values:
        return False
    raw = values[-1].strip()
    if raw not in ("0", "1"):
        raise ValueError(f"batch must be 0 or 1, got {raw[:20]!r}")
    return raw == "1"


def parse_after(query_string: bytes) -> int | None:
    """`after` from the query string: None when absent; ValueError unless a non-negative integer."""
    values = parse_qs(query_string.decode("latin-1"), keep_blank_values=True).get("after")
    if not values:
        return None
    raw = values[-1].strip()
    if not raw.isdigit() or len(raw) > 19:
        raise ValueError(f"after must be a non-negative integer, got {raw!r}")
    return int(raw)


class EventsConsumer(SessionBoundConsumer):
    any_scope = SCOPES  # the plant's stream is for people with a role, as the Control Room is (4403)
    _fanout: EventFanout | None = None
    _pump: asyncio.Task | None = None
    _writing: asyncio.Task | None = None  # a direct write that had to wait (backpressure)
    _frame_writer: direct_send.FrameWriter | None = None  # prebuilt frames to the transport (uvicorn)
    _idle = False  # the pump waits on an empty queue: a round may be written at once
    batch = False  # the client takes arrays of events (?batch=1)

    async def connect(self) -> None:
        bind_server_loop(asyncio.get_running_loop())
        query = self.scope.get("query_string", b"")
        invalid: tuple[str, ValueError] | None = None
        for code, parse in (("invalid_after", parse_after), ("invalid_batch", parse_batch)):
            try:
                parse(query)
            except ValueError as exc:
                invalid = (code, exc)
                break
        if invalid is not None:  # admitted (or refused) first, as any socket, then told why not
            refusal = await self.admit()
            await self.accept()
            if refusal is not None:
                await self.close(code=refusal)
                return
            await self.send_json({"type": "error", "code": invalid[0], "detail": str(invalid[1])})
            await self.end_socket(CLOSE_BAD_REQUEST)
            return
        after, self.batch = parse_after(query), parse_batch(query)
        self._sent: set[int] = set()
        self._queue: deque[EncodedFrame] = deque()
        self._queued = asyncio.Event()
        self._overflowed = False
        self._replay = after is not None
        self._first_batch: list[dict[str, Any]] | None = None
        self._floor = self._high = 0  # set below, before anything is sent
        # Event frames go straight to the server's send (core.direct_send), not through the
        # session wrapper; a consumer mounted without keep_server_send uses its own send.
        self._server_send = self.scope.get(direct_send.SERVER_SEND) or self.base_send
        self._frame_writer = direct_send.frame_writer(self._server_send)
        # Subscribe before reading the table: anything committed from here on is either in the
        # replay or in the queue (or both; the id set removes the duplicate). Until the pump
        # starts, offered frames only queue (nothing is written to a socket not yet admitted).
        self._fanout = EventFanout.current()
        await self._fanout.subscribe(self)
        # The table is read in the same thread hop as the socket check after the group join:
        # the current end of the outbox (live only) or the replay's first batch.
        refusal = await self.admit(then=partial(_start_of_stream, after))
        if refusal is not None:
            await self.stop_streams()
            await self.accept()
            await self.close(code=refusal)
            return
        if after is None:
            after = self.admitted_with  # live only: start from the current end of the outbox
        else:
            self._first_batch = self.admitted_with
        self._floor = after  # ids at or below it are never sent: the client has them
        self._high = after  # the newest id sent (or the floor)
        # Accept only once subscribed: a client that sees the socket open misses nothing live.
        await self.accept()
        self._pump = asyncio.create_task(self._run())

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels' AsyncConsumer.dispatch without the `close_old_connections` it runs on the
        one thread-sensitive thread before every message (connect, disconnect, control messages):
        this consumer reads the database only in worker threads that give their connection back
        (database_sync_to_async closes old connections around each call), and that hop made
        every handshake and close wait behind the others and behind any chat turn running there."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """The stream takes no commands; an inbound frame only re-validates the socket."""
        await self.socket_still_valid()

    async def stop_streams(self) -> None:
        fanout, self._fanout = self._fanout, None
        if fanout is not None:
            await fanout.unsubscribe(self)
        pump, self._pump = self._pump, None
        if pump is not None and pump is not asyncio.current_task():
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pump
        self._idle = False
        writing, self._writing = self._writing, None
        if writing is not None:
            writing.cancel()

    def offer_many(self, frames: list[EncodedFrame]) -> None:
        """Live frames from the fan-out (one round), never awaited. With nothing queued and no
        write pending, the round is written now (no wake-up of the pump: at 500 sockets the
        wake-up was ≈ 15 % of a delivered frame's cost); otherwise it is queued for the pump."""
        if self._writing is not None and self._writing.done():
            self._writing = None
        if self._idle and self._writing is None and not self._queue:
            try:
                self._writing = self._write_now(frames, self._filter(frames))
            except Exception as exc:  # the socket is gone: its disconnect follows
                logger.debug("Writing events to a socket failed (%r)", exc)
            return
        if len(self._queue) + len(frames) > QUEUE_LIMIT:
            self._overflowed = True  # the pump re-reads the outbox instead
        else:
            self._queue.extend(frames)
        self._idle = False
        self._queued.set()

    def _take_queue(self) -> list[EncodedFrame]:
        frames = list(self._queue)
        self._queue.clear()
        self._queued.clear()
        return frames

    async def _run(self) -> None:
        try:
            if self._replay:  # live only: anything committed after the end just read comes live
                await self._catch_up()
            # Flush what arrived during the replay, in id order.
            await self._deliver(sorted(self._take_queue(), key=lambda item: item[0]["id"]))
            while True:
                self._idle = not self._queue and not self._overflowed
                await self._queued.wait()
                self._idle = False
                writing, self._writing = self._writing, None
                if writing is not None:  # a direct write waited on backpressure: it goes first
                    with contextlib.suppress(Exception):  # failed: the socket is gone
                        await writing
                overflowed, self._overflowed = self._overflowed, False
                await self._deliver(self._take_queue())
                if overflowed:
                    await self._catch_up()
        except asyncio.CancelledError:
            raise
        except Exception:
            await self.close(code=1011)

    async def _catch_up(self) -> None:
        """Send every stored event newer than the newest sent id, in bounded batches (the first
        one may have been read with the handshake's check)."""
        while True:
            frames, self._first_batch = self._first_batch, None
            if frames is None:
                frames = await events_after(self._high, REPLAY_BATCH)
            await self._deliver([(frame, None) for frame in frames])
            if len(frames) < REPLAY_BATCH:
                return

    def _for_this_socket(self, frame: dict[str, Any]) -> bool:
        """Not sent yet (then remembered as sent), and public or this user's own."""
        event_id = frame["id"]
        if event_id <= self._floor or event_id in self._sent:
            return False
        self._sent.add(event_id)
        if event_id > self._high:
            self._high = event_id
        if len(self._sent) > 2 * DEDUPE_WINDOW:
            self._floor = max(self._floor, self._high - DEDUPE_WINDOW)
            self._sent = {i for i in self._sent if i > self._floor}
        owner = frame.get("owner_id")
        # A private event (payload field owner_id): its owner's sockets only, live and replayed.
        return owner is None or (self.user is not None and owner == self.user.pk)

    def _filter(self, frames: Sequence[tuple[dict[str, Any], str | None]]) -> list[str]:
        return [text or encode_frame(frame) for frame, text in frames if self._for_this_socket(frame)]

    def _messages(self, texts: list[str]) -> list[str]:
        """The WebSocket messages carrying `texts`: one each, or (batch=1) arrays of about
        MESSAGE_CHARS at most — one event as its object, several as a JSON array of them."""
        if not self.batch:
            return texts
        messages: list[str] = []
        message: list[str] = []
        size = 0
        for text in texts:
            if message and size + len(text) > MESSAGE_CHARS:
                messages.append(_joined(message))
                message, size = [], 0
            message.append(text)
            size += len(text) + 1
        if message:
            messages.append(_joined(message))
        return messages

    def _write_now(self, frames: list[EncodedFrame], texts: list[str]) -> asyncio.Task | None:
        """Write a round's `texts` (its frames filtered for this socket) now; the task finishing
        the write when it had to wait. A socket that takes the whole round uses the messages (and
        frames) built once for the round; prebuilt frames go straight to the transport while the
        server would write at once (core.direct_send.frame_writer), the rest through its send."""
        whole = frames if isinstance(frames, Round) and len(texts) == len(frames) else None
        if whole is not None:
            messages = whole.built.get(self.batch)
            if messages is None:
                messages = whole.built[self.batch] = self._messages(texts)
        else:
            messages = self._messages(texts)
        write = self._frame_writer
        if write is not None and messages:
            if whole is not None:
                wire = whole.built.get((self.batch, "frames"))
                if wire is None:
                    wire = whole.built[(self.batch, "frames")] = [direct_send.text_frame(m) for m in messages]
            else:
                wire = [direct_send.text_frame(m) for m in messages]
            for n, data in enumerate(wire):
                if not write(data):
                    messages = messages[n:]
                    break
            else:
                return None
        return direct_send.start(self._write(messages))

    async def _write(self, messages: list[str]) -> None:
        send = self._server_send
        for text in messages:
            await send({"type": "websocket.send", "text": text})

    async def _deliver(self, frames: Sequence[tuple[dict[str, Any], str | None]]) -> None:
        await self._write(self._messages(self._filter(frames)))


def _start_of_stream(after: int | None) -> int | list[dict[str, Any]]:
    """(In the admission's thread hop.) Live only: the outbox's newest id; with `after`: the
    replay's first batch."""
    if after is None:
        return outbox.newest_event_id()
    return outbox.stored_events_after(after, REPLAY_BATCH)


def _joined(texts: list[str]) -> str:
    return texts[0] if len(texts) == 1 else "[" + ",".join(texts) + "]"
