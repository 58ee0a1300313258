"""WebSocket clients of bench/event_bus.py: they receive, time, drop and resume like events.js.

A client asks for `?batch=1` unless told not to (static/aria/events.js does): a message is then
one event object or a JSON array of them, and every event in it counts.

The 500 clients run in one process on the server's machine, so what a client costs per message
is added to the latencies it measures (the last socket of a round is read after the 499 before
it). Two implementations: `lean` (default; `bench_ws.LeanConnection`: the handshake and
unfragmented frames parsed in the protocol's data_received, time taken when the bytes arrive;
the bench process used a third less CPU at 500 clients) and `websockets` (the websockets
library's client, a task per socket).
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

try:  # the clients share the machine with the server: the cheaper their loop, the less they skew it
    import uvloop

    LOOP_NAME = "uvloop"
except ImportError:  # pragma: no cover
    uvloop = None
    LOOP_NAME = "asyncio"

import bench_ws  # beside this module (bench/ is the script's directory)

RETRIES = {"connect": 0}  # handshakes retried (per phase, reset by run_phase)
BATCH = {"on": True}  # ?batch=1 on every connection (set from --no-batch)
CLIENT = {"kind": "lean"}  # lean | websockets (set from --client)


def run(coro: Any) -> Any:
    """asyncio.run on uvloop when it is installed (uvicorn[standard] brings it)."""
    if uvloop is not None:
        return uvloop.run(coro)
    return asyncio.run(coro)


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


def record(client: Client, raw: str | bytes, received: float, tag: str) -> None:
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


async def client_loop(client: Client, ws: Any, tag: str) -> None:
    async for raw in ws:
        record(client, raw, time.time(), tag)


async def attach(client: Client, url: str, headers: dict[str, str], tag: str) -> None:
    """Open the client's socket (CLIENT["kind"]) and start recording what it receives."""
    if CLIENT["kind"] == "lean":
        client.ws = await connect(url, headers, on_text=lambda raw, at: record(client, raw, at, tag))
        client.task = None
    else:
        client.ws = await connect(url, headers)
        client.task = asyncio.create_task(client_loop(client, client.ws, tag))


async def stop(client: Client) -> None:
    if client.task is not None:
        client.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await client.task
    await client.ws.close()


async def resume(client: Client, ws_url: str, headers: dict[str, str], tag: str, after: int) -> None:
    """Reconnect the way static/aria/events.js does: ?after=<last id seen>."""
    client.resumed_at = time.time()
    await attach(client, with_batch(f"{ws_url}?after={after}"), headers, tag)


async def churn(
    clients: list[Client], ws_url: str, headers: dict[str, str], tag: str, at: float, offline: float
) -> tuple[float, float] | None:
    """Drop some clients mid-run and bring them back after `offline` seconds; returns the
    wall-clock window (drop, last reconnect done), or None without churn."""
    await asyncio.sleep(at)
    if not clients:
        return None
    dropped = time.time()
    await asyncio.gather(*(stop(c) for c in clients))
    await asyncio.sleep(offline)
    await asyncio.gather(*(resume(c, ws_url, headers, tag, c.last_id) for c in clients))
    return dropped, time.time()


async def connect(url: str, headers: dict[str, str], attempts: int = 8, on_text: Any = None) -> Any:
    """Open a socket (lean when `on_text` is given, else the websockets library's); a refused or
    timed-out handshake (a busy server answers 403 once its handshake timeout runs out) is
    retried with exponential backoff and jitter, as static/aria/events.js does (500 ms doubling,
    half of it random)."""
    from websockets.asyncio.client import connect as ws_connect
    from websockets.exceptions import InvalidHandshake

    delay = 0.5
    for attempt in range(attempts):
        try:
            if on_text is not None:
                return await bench_ws.open_lean(url, headers, on_text, timeout=30)
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
