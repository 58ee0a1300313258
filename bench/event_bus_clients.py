"""WebSocket clients of bench/event_bus.py: they receive, time, drop and resume like events.js.

A client asks for `?batch=1` unless told not to (static/aria/events.js does): a message is then
one event object or a JSON array of them, and every event in it counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import resource
import time
from pathlib import Path
from typing import Any

RETRIES = {"connect": 0}  # handshakes retried (per phase, reset by run_phase)
BATCH = {"on": True}  # ?batch=1 on every connection (set from --no-batch)


def with_batch(url: str) -> str:
    if not BATCH["on"]:
        return url
    return url + ("&" if "?" in url else "?") + "batch=1"


class Client:
    def __init__(self, index: int) -> None:
        self.index = index
        self.latency: dict[int, float] = {}  # event id -> seconds, frames that arrived live
        self.recovered: set[int] = set()  # frames published while away, delivered by ?after= replay
        self.last_id = 0
        self.resumed_at = 0.0  # wall-clock time of the last reconnect
        self.ws: Any = None
        self.task: asyncio.Task | None = None

    def has_all(self, expected: set[int]) -> bool:
        return expected <= (self.latency.keys() | self.recovered)


async def client_loop(client: Client, ws: Any, tag: str) -> None:
    async for raw in ws:
        received = time.time()
        message = json.loads(raw)
        for frame in message if isinstance(message, list) else [message]:
            if frame.get("type") != "thinking_delta" or frame.get("turn_id") != tag:
                continue
            client.last_id = max(client.last_id, frame["id"])
            published_at = float(frame["content"])
            if published_at < client.resumed_at:
                client.recovered.add(frame["id"])
            else:
                client.latency.setdefault(frame["id"], received - published_at)


async def stop(client: Client) -> None:
    client.task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await client.task
    await client.ws.close()


async def resume(client: Client, ws_url: str, headers: dict[str, str], tag: str, after: int) -> None:
    """Reconnect the way static/aria/events.js does: ?after=<last id seen>."""
    client.resumed_at = time.time()
    client.ws = await connect(with_batch(f"{ws_url}?after={after}"), headers)
    client.task = asyncio.create_task(client_loop(client, client.ws, tag))


async def churn(
    clients: list[Client], ws_url: str, headers: dict[str, str], tag: str, at: float, offline: float
) -> None:
    """Drop some clients mid-run and bring them back after `offline` seconds."""
    await asyncio.sleep(at)
    await asyncio.gather(*(stop(c) for c in clients))
    await asyncio.sleep(offline)
    await asyncio.gather(*(resume(c, ws_url, headers, tag, c.last_id) for c in clients))


async def connect(url: str, headers: dict[str, str], attempts: int = 8) -> Any:
    """Open a socket; a refused or timed-out handshake (a busy server answers 403 once its
    handshake timeout runs out) is retried with exponential backoff and jitter, as
    static/aria/events.js does (500 ms doubling, half of it random)."""
    from websockets.asyncio.client import connect as ws_connect
    from websockets.exceptions import InvalidHandshake

    delay = 0.5
    for attempt in range(attempts):
        try:
            return await ws_connect(
                url, additional_headers=headers, open_timeout=30, max_queue=None, ping_interval=None
            )
        except (InvalidHandshake, OSError, TimeoutError):
            if attempt == attempts - 1:
                raise
            RETRIES["connect"] += 1
            await asyncio.sleep(delay / 2 + random.random() * delay / 2)
            delay = min(delay * 2, 15.0)
    raise AssertionError("unreachable")


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds so far of these processes (Linux /proc), for CPU per frame: a
    figure the machine's other load does not inflate the way it does latencies."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def server_pids(server_pid: int) -> list[int]:
    """The server and its worker processes (uvicorn --workers forks children)."""
    children = Path(f"/proc/{server_pid}/task/{server_pid}/children")
    with contextlib.suppress(OSError):
        return [server_pid, *(int(p) for p in children.read_text().split())]
    return [server_pid]


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)
