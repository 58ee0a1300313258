#!/usr/bin/env python
"""The same ASGI application under daphne and under uvicorn, side by side in one run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/h2 REDIS_URL=redis://127.0.0.1:6379/2 \\
        .venv/bin/python bench/asgi_servers.py [--seconds 5] [--concurrency 32] [--ws-rounds 200]

Both servers run `aria_project.asgi:application` as subprocesses on free ports, on the same
database and channel layer (DEBUG off). For each server, in alternating order over `--rounds`:
- HTTP: requests/s and latency of GET /healthz and of an API read (GET /api/v1/me with a bearer
  token), from `--concurrency` keep-alive connections for `--seconds` each;
- WebSocket: the time to open /ws/events (handshake + session auth + accept), and the round trip
  of an event: `publish()` in this process (outbox row + channels-redis) until the frame
  arrives at the client, one at a time.
Prints one JSON document. DATABASE_URL is optional (a temporary SQLite file otherwise);
REDIS_URL is required: the events reach the servers through channels-redis.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SERVERS = ("daphne", "uvicorn")


def server_command(kind: str, port: int) -> list[str]:
    target = "aria_project.asgi:application"
    if kind == "uvicorn":
        # Channels' ProtocolTypeRouter has no lifespan handler: turn the protocol off.
        return [sys.executable, "-m", "uvicorn", target, "--host", "127.0.0.1", "--port", str(port),
                "--lifespan", "off", "--no-access-log", "--log-level", "warning"]  # fmt: skip
    return [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "-v", "0", target]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _percentiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None, "p99": None}
    ordered = sorted(values)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 3)

    return {"p50": at(0.50), "p95": at(0.95), "p99": at(0.99)}


# --- HTTP load: a minimal keep-alive HTTP/1.1 client, so the client is never the bottleneck ----------


async def _http_worker(
    port: int, request: bytes, until: float, latencies: list[float], errors: list[str], statuses: dict[int, int]
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.perf_counter() < until:
            started = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            status = int(lines[0].split()[1])
            length = next(
                (int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:")), 0
            )
            await reader.readexactly(length)
            latencies.append(time.perf_counter() - started)
            statuses[status] = statuses.get(status, 0) + 1
            if any(line.lower() == "connection: close" for line in lines):
                writer.close()
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except Exception as exc:  # a dropped connection is reported, not fatal
        errors.append(repr(exc))
    finally:
        writer.close()


async def http_load(port: int, path: str, headers: dict[str, str], *, seconds: float, concurrency: int) -> dict:
    extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}\r\n".encode()
    latencies: list[float] = []
    errors: list[str] = []
    statuses: dict[int, int] = {}
    warmup_until = time.perf_counter() + 0.5
    await asyncio.gather(*(_http_worker(port, request, warmup_until, [], [], {}) for _ in range(concurrency)))
    started = time.perf_counter()
    until = started + seconds
    await asyncio.gather(*(_http_worker(port, request, until, latencies, errors, statuses) for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    return {
        "requests": len(latencies),
        "requests_per_s": round(len(latencies) / elapsed, 1),
        "latency_ms": _percentiles(latencies),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "errors": len(errors),
    }


# --- WebSocket: connect time and publish → receive round trip -------------------------------------


async def ws_round_trips(port: int, cookie: str, *, rounds: int, connects: int) -> dict:
    from asgiref.sync import sync_to_async
    from websockets.asyncio.client import connect

    from core.events import publish

    url = f"ws://127.0.0.1:{port}/ws/events"
    headers = {"Cookie": f"sessionid={cookie}", "Origin": f"http://127.0.0.1:{port}"}
    connect_times = []
    for _ in range(connects):
        started = time.perf_counter()
        async with connect(url, additional_headers=headers, open_timeout=10, ping_interval=None):
            connect_times.append(time.perf_counter() - started)

    round_trips = []
    lost = 0
    publish_event = sync_to_async(lambda n: publish("work_order_ready", {"work_order_id": n}).pk, thread_sensitive=True)
    async with connect(url, additional_headers=headers, open_timeout=10, ping_interval=None, max_queue=None) as ws:
        await asyncio.sleep(0.5)  # the consumer has joined its group and finished its (empty) replay
        for n in range(rounds):
            started = time.perf_counter()
            event_id = await publish_event(n)
            try:
                while True:
                    frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=5))
                    if frame.get("id") == event_id:
                        round_trips.append(time.perf_counter() - started)
                        break
            except TimeoutError:
                lost += 1
    return {
        "connect_ms": _percentiles(connect_times),
        "round_trip_ms": _percentiles(round_trips),
        "round_trips": len(round_trips),
        "lost": lost,
    }


# --- orchestration ------------------------------------------------------------------------------


def _prepare_database() -> tuple[str, str]:
    """Migrate; return (bearer token, session key) of a bench user in the servers' database."""
    import django

    django.setup()
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import Group, User
    from django.contrib.sessions.backends.db import SessionStore
    from django.core.management import call_command

    from core.access import OPERATOR
    from core.tokens import api_token_create

    call_command("migrate", verbosity=0, interactive=False)
    user, _ = User.objects.get_or_create(username="bench-asgi")
    user.groups.add(Group.objects.get_or_create(name=OPERATOR)[0])  # the event stream needs a role
    _, raw = api_token_create(user=user, name="bench")
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return raw, session.session_key


def _wait_ready(port: int, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            if b" 200 " in sock.recv(200):
                return
        time.sleep(0.2)
    raise RuntimeError("server did not become ready")


def _mean(results: list[dict], *keys: str) -> float | None:
    values = []
    for result in results:
        value: Any = result
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if value is not None:
            values.append(value)
    return round(statistics.fmean(values), 3) if values else None


async def measure(kind: str, port: int, token: str, cookie: str, args: argparse.Namespace) -> dict:
    return {
        "healthz": await http_load(port, "/healthz", {}, seconds=args.seconds, concurrency=args.concurrency),
        "api_me": await http_load(
            port, "/api/v1/me", {"Authorization": f"Bearer {token}"}, seconds=args.seconds, concurrency=args.concurrency
        ),
        "websocket": await ws_round_trips(port, cookie, rounds=args.ws_rounds, connects=args.ws_connects),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="load duration per HTTP measurement")
    parser.add_argument("--concurrency", type=int, default=32, help="keep-alive HTTP connections")
    parser.add_argument("--ws-rounds", type=int, default=200, help="publish→receive round trips")
    parser.add_argument("--ws-connects", type=int, default=50, help="WebSocket connects timed")
    parser.add_argument("--rounds", type=int, default=2, help="measurement rounds, alternating server order")
    args = parser.parse_args()
    if not os.environ.get("REDIS_URL"):
        print("Set REDIS_URL: events reach the servers through channels-redis.", file=sys.stderr)
        return 2

    var_dir = tempfile.mkdtemp(prefix="aria-bench-asgi-")
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "aria_project.settings",
            "ARIA_VAR_DIR": var_dir,
            "DJANGO_DEBUG": "false",
            "LOG_LEVEL": "WARNING",
            "ARIA_EMBEDDED_WORKER": "false",
        }
    )
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))  # shared: the servers read our session
    token, cookie = _prepare_database()

    ports = {kind: _free_port() for kind in SERVERS}
    processes = {
        kind: subprocess.Popen(server_command(kind, ports[kind]), cwd=ROOT, env=os.environ.copy()) for kind in SERVERS
    }
    results: dict[str, list[dict]] = {kind: [] for kind in SERVERS}
    try:
        for kind in SERVERS:
            _wait_ready(ports[kind], processes[kind])
        for round_no in range(args.rounds):
            order = SERVERS if round_no % 2 == 0 else tuple(reversed(SERVERS))
            for kind in order:
                results[kind].append(asyncio.run(measure(kind, ports[kind], token, cookie, args)))
    finally:
        for process in processes.values():
            process.terminate()
        for process in processes.values():
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()

    summary = {
        kind: {
            "healthz_rps": _mean(results[kind], "healthz", "requests_per_s"),
            "api_me_rps": _mean(results[kind], "api_me", "requests_per_s"),
            "api_me_p95_ms": _mean(results[kind], "api_me", "latency_ms", "p95"),
            "ws_connect_p50_ms": _mean(results[kind], "websocket", "connect_ms", "p50"),
            "ws_round_trip_p50_ms": _mean(results[kind], "websocket", "round_trip_ms", "p50"),
            "ws_round_trip_p95_ms": _mean(results[kind], "websocket", "round_trip_ms", "p95"),
        }
        for kind in SERVERS
    }
    faster_http = max(SERVERS, key=lambda k: summary[k]["api_me_rps"] or 0)
    faster_ws = min(SERVERS, key=lambda k: summary[k]["ws_round_trip_p50_ms"] or float("inf"))
    from django.db import connection

    print(
        json.dumps(
            {
                "benchmark": "asgi_servers",
                "app": "aria_project.asgi:application",
                "database": connection.vendor,
                "channel_layer": "channels_redis",
                "python": platform.python_version(),
                "cpus": os.cpu_count(),
                "settings": vars(args),
                "summary": summary,
                "faster": {"http": faster_http, "websocket": faster_ws},
                "rounds": results,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
