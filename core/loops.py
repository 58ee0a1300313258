"""Named event loops running forever in daemon threads, one per name per process.

Sync code (Django views, Celery tasks) hands coroutines to one of these with
`asyncio.run_coroutine_threadsafe` instead of starting a loop per call: async clients made on a
loop stay on it (the Anthropic SDK client, channel-layer connections), and the caller does not
wait for work it does not need the result of (a WebSocket broadcast).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_loops: dict[str, asyncio.AbstractEventLoop] = {}


def daemon_loop(name: str) -> asyncio.AbstractEventLoop:
    """The process's loop called `name`, started on first use (and again if it was closed)."""
    with _lock:
        loop = _loops.get(name)
        if loop is None or loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name=f"{name}-loop", daemon=True).start()
            _loops[name] = loop
        return loop


CANCEL_AGAIN_SECONDS = 0.5


async def cancel_and_wait(tasks: Iterable[asyncio.Task]) -> None:
    """Cancel `tasks` and wait until every one has ended, cancelling again while one runs on.

    Python 3.11's `asyncio.wait_for` returns its result and drops the caller's cancellation when
    both land in the same loop turn (gh-86296, fixed in 3.12), and redis-py awaits it while it
    connects: a channels-redis receive cancelled there went on into its next BZPOPMIN and blocked
    for good, and whoever awaited it (a closing socket's consumer, the server's shutdown, an event
    loop's close) waited forever. A repeated cancellation lands on the next await. Cancelled itself
    meanwhile, this goes on until the tasks have ended, then raises the cancellation: a task left
    running is the hang it is here to end. Errors the tasks end with are logged, not raised."""
    tasks = list(tasks)
    pending = {task for task in tasks if not task.done()}
    for task in pending:
        task.cancel()
    cancelled = False
    while pending:
        try:
            await asyncio.wait(pending, timeout=CANCEL_AGAIN_SECONDS)
        except asyncio.CancelledError:
            cancelled = True
        pending = {task for task in pending if not task.done()}
        for task in pending:
            logger.debug("Task %s ran on after its cancellation; cancelling it again", task.get_name())
            task.cancel()
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            logger.debug("Task %s ended with %r", task.get_name(), task.exception())
    if cancelled:
        raise asyncio.CancelledError
