"""channels-redis' layer with a receive that ends when it is cancelled.

Channels cancels a consumer's pending `receive` when the socket closes (and the events fan-out
cancels its own when the last socket of the process goes), then awaits it. Under Python 3.11 a
channels-redis receive can drop that cancellation: redis-py awaits `asyncio.wait_for` while it
(re)connects, and 3.11's `wait_for` returns its result instead of raising when the cancellation
lands in the same loop turn (gh-86296, fixed in 3.12). The receive then went into its next
BZPOPMIN and blocked for good, and the closing consumer with it: one leaked task per such socket,
and a server that never finished shutting down ("Waiting for background tasks to complete").

Here the library's receive runs as a task of its own and the caller awaits it through a shield,
so the caller's cancellation always arrives and the caller ends at once; the inner receive is then
cancelled, again every half second while it runs on (`core.loops.cancel_and_wait`), by a task of
its own — not by the caller, whose own waiting could be cancelled in turn and leave the inner
receive behind. Nothing else changes: same configuration, same wire format.
"""

from __future__ import annotations

import asyncio
from typing import Any

from channels_redis.core import RedisChannelLayer as _RedisChannelLayer

from core.loops import cancel_and_wait

_stopping: set[asyncio.Task] = set()  # cancellations under way (the loop keeps only weak references)


class RedisChannelLayer(_RedisChannelLayer):
    async def receive(self, channel: str) -> dict[str, Any]:
        inner = asyncio.ensure_future(super().receive(channel))
        try:
            return await asyncio.shield(inner)
        except asyncio.CancelledError:
            # A message the inner receive took in this same turn is dropped with it, as
            # channels-redis drops a cancelled receiver's buffer: its consumer is going away.
            if not inner.done():
                stopping = asyncio.ensure_future(cancel_and_wait([inner]))
                _stopping.add(stopping)
                stopping.add_done_callback(_stopping.discard)
            raise
