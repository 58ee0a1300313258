"""Named event loops running forever in daemon threads, one per name per process.

Sync code (Django views, Celery tasks) hands coroutines to one of these with
`asyncio.run_coroutine_threadsafe` instead of starting a loop per call: async clients made on a
loop stay on it (the Anthropic SDK client, channel-layer connections), and the caller does not
wait for work it does not need the result of (a WebSocket broadcast).
"""

from __future__ import annotations

import asyncio
import threading

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
