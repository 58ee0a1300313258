"""Fast path from the outbox to WebSocket consumers through the Channels layer (at-most-once).

Channels' InMemoryChannelLayer is not safe across event loops: a `group_send` made with
`async_to_sync` from a worker thread (its own short-lived loop) wakes a consumer waiting on the
server's loop only when that loop next wakes for another reason — seconds later. So the
consumer binds the server's loop here (`bind_server_loop`) and `broadcast()` hands the send to
that loop with `run_coroutine_threadsafe`. The same path is correct with channels-redis, and
with no server loop in this process (a separate worker or a shell) it falls back to
one broadcast loop of its own (`core.loops`): the publisher never waits for delivery, sends stay
in publish order, and at exit the process gives sends in flight a moment to finish (clients that
miss a frame anyway catch up from the outbox). Domain code never sees any of this: it calls
`publish()`.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import threading
import weakref
from concurrent.futures import Future
from typing import Any

from channels.layers import get_channel_layer

from core.loops import daemon_loop

logger = logging.getLogger(__name__)

EVENTS_GROUP = "aria.events"
MESSAGE_TYPE = "bus.event"

_server_loop: asyncio.AbstractEventLoop | None = None
_bind_lock = threading.Lock()
# One FIFO lock per loop keeps group_sends in publish order even when a send awaits I/O (Redis).
_send_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()
_pending: set[asyncio.Task] = set()
_in_flight: set[Future] = set()  # sends handed to a loop in another thread, not yet done
EXIT_DRAIN_SECONDS = 2.0


def bind_server_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Record the loop the ASGI server runs consumers on (called from a consumer's connect)."""
    global _server_loop
    with _bind_lock:
        _server_loop = loop


def server_loop() -> asyncio.AbstractEventLoop | None:
    """The bound server loop if it is still alive, else None."""
    loop = _server_loop
    if loop is None or loop.is_closed() or not loop.is_running():
        return None
    return loop


def event_message(frame: dict[str, Any]) -> dict[str, Any]:
    """The channel-layer message carrying one bus frame (handled by EventsConsumer.bus_event)."""
    return {"type": MESSAGE_TYPE, "frame": frame}


async def send_frame(frame: dict[str, Any]) -> None:
    """Send one frame to the events group, in order with other sends on this loop."""
    layer = get_channel_layer()
    if layer is None:
        return
    loop = asyncio.get_running_loop()
    lock = _send_locks.get(loop)
    if lock is None:
        lock = _send_locks[loop] = asyncio.Lock()
    async with lock:
        await layer.group_send(EVENTS_GROUP, event_message(frame))


def _log_failure(frame_id: Any, outcome: Future | asyncio.Task) -> None:
    if outcome.cancelled():
        return
    exc = outcome.exception()
    if exc is not None:  # the outbox holds the event; clients catch up with ?after=
        logger.warning("Broadcast of event %s failed: %r", frame_id, exc)


def broadcast(frame: dict[str, Any]) -> None:
    """Hand a frame to the channel layer without blocking on delivery; never raises."""
    if get_channel_layer() is None:
        return
    frame_id = frame.get("id")
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    try:
        if running is not None:
            task = running.create_task(send_frame(frame))
            _pending.add(task)
            task.add_done_callback(_pending.discard)
            task.add_done_callback(lambda t: _log_failure(frame_id, t))
            return
        future = asyncio.run_coroutine_threadsafe(send_frame(frame), server_loop() or daemon_loop("event-broadcast"))
        _in_flight.add(future)
        future.add_done_callback(_in_flight.discard)
        future.add_done_callback(lambda f: _log_failure(frame_id, f))
    except Exception:
        logger.exception("Broadcast of event %s failed", frame_id)


@atexit.register
def _drain() -> None:
    """Let sends already handed off finish before the process exits (bounded)."""
    if _in_flight:
        concurrent.futures.wait(list(_in_flight), timeout=EXIT_DRAIN_SECONDS)
