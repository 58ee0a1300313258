#!/usr/bin/env python
"""Event bus fan-out benchmark: N WebSocket clients on channels-redis against a real server.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/h1 REDIS_URL=redis://127.0.0.1:6379/1 \\
        .venv/bin/python bench/event_bus.py [--clients 100] [--events 2000] [--rate 25] [--server uvicorn] [--client lean]

It migrates the database, starts the ASGI server (uvicorn as README's production command —
`--lifespan off`, permessage-deflate off — or daphne) as a subprocess, DEBUG off, and runs
two phases against it: 1 client (the baseline), then N clients. In each, a publisher process
calls `publish()` for `--events` events at `--rate` per second (each carrying its publish
wall-clock time); every client records the latency of each frame it receives live. Mid-run,
`--churn` of the N clients drop for a second and reconnect with `?after=<last id seen>` (as
static/aria/events.js does); after the run, any client still missing events reconnects with
`?after=<id before its first gap>`. Replayed frames count as delivered, not in the latencies.
Prints one JSON document: delivered/expected live and after replay, p50/p95/p99 latency for both
phases, the server's CPU per delivered frame (a figure the machine's other load does not inflate
the way it inflates latencies) and the machine's load average, and the goals beside the figures
(p95(N) <= 3 x p95(1 client); 100 % delivered after replay). Handshakes a busy server refuses are
retried with backoff, as the browser's events.js does. `--workers N` runs N uvicorn processes
(each fans out to its own sockets). Clients connect with `?batch=1` as events.js does (a message
may carry several events); `--no-batch` measures one event per message. All clients live in this
one process on the server's machine: `--client lean` (default, bench/bench_ws.py) costs the
least per message, `--client websockets` is the websockets library's client (≈ 1.5x the CPU).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import event_bus_clients as clients_mod  # noqa: E402  (beside this script)
import topology  # noqa: E402  (beside this script)

AGENT = "bench"


def _setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aria_project.settings")
    import django

    django.setup()


# --- publisher (a separate process: `--publish`) ------------------------------------------


def run_publisher(events: int, rate: float, tag: str) -> None:
    """Publish `events` thinking_delta events at `rate`/s; print the ids as JSON."""
    _setup_django()
    from django.db import transaction

    from core.events import publish

    ids: list[int] = []
    times: list[float] = []  # wall-clock publish time of each event (the time its frame carries)
    interval = 1.0 / rate if rate > 0 else 0.0
    started = time.perf_counter()
    for n in range(events):
        due = started + n * interval
        delay = due - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        now = time.time()
        times.append(now)
        with transaction.atomic():
            ids.append(publish("thinking_delta", {"agent": AGENT, "content": f"{now:.6f}", "turn_id": tag}).pk)
    print(json.dumps({"ids": ids, "times": times, "seconds": round(time.perf_counter() - started, 2)}))


# --- phases ------------------------------------------------------------------------------------


async def run_phase(
    *,
    base: str,
    headers: dict[str, str],
    clients: int,
    events: int,
    rate: float,
    drain: float,
    churn: float,
    server_pid: int,
) -> dict:
    tag = f"bench-{clients}-{secrets.token_hex(4)}"
    clients_mod.RETRIES["connect"] = 0
    ws_url = base.replace("http://", "ws://") + "/ws/events"
    pool = [clients_mod.Client(i) for i in range(clients)]
    for batch in range(0, clients, 25):  # connect in small waves: the server is one process
        group = pool[batch : batch + 25]
        await asyncio.gather(*(clients_mod.attach(c, clients_mod.with_batch(ws_url), headers, tag) for c in group))
    await asyncio.sleep(1.0)  # every consumer has joined the group
    churned = pool[:: max(1, round(1 / churn))] if churn > 0 and clients > 1 else []
    churner = asyncio.create_task(clients_mod.churn(churned, ws_url, headers, tag, at=events / rate / 2, offline=1.0))

    server_pids = clients_mod.server_pids(server_pid)
    load_before = os.getloadavg()[0]
    server_cpu, client_cpu = clients_mod.cpu_seconds(server_pids), clients_mod.own_cpu_seconds()
    publisher = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--publish",
        str(events),
        "--rate",
        str(rate),
        "--tag",
        tag,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await publisher.communicate()
    if publisher.returncode != 0:
        raise RuntimeError("publisher failed")
    churn_window = await churner
    published = json.loads(out.decode().strip().splitlines()[-1])
    expected = published["ids"]
    expected_set = set(expected)

    deadline = time.monotonic() + drain
    while time.monotonic() < deadline and not all(c.has_all(expected_set) for c in pool):
        await asyncio.sleep(0.1)
    server_cpu = clients_mod.cpu_seconds(server_pids) - server_cpu
    client_cpu = clients_mod.own_cpu_seconds() - client_cpu
    await asyncio.gather(*(clients_mod.stop(c) for c in pool))

    live = sum(len(expected_set & c.latency.keys()) for c in pool)
    # Clients still missing events reconnect from just before their first gap (outbox replay).
    missing_clients = [c for c in pool if not c.has_all(expected_set)]
    for client in missing_clients:
        first_gap = min(expected_set - client.latency.keys() - client.recovered)
        await clients_mod.resume(client, ws_url, headers, tag, first_gap - 1)
        until = time.monotonic() + 30
        while time.monotonic() < until and not client.has_all(expected_set):
            await asyncio.sleep(0.05)
        await clients_mod.stop(client)
    after_replay = sum(len(expected_set & (c.latency.keys() | c.recovered)) for c in pool)

    latencies = [v for c in pool for k, v in c.latency.items() if k in expected_set]
    # p50 per tenth of the run, in publish order: a rising series means a backlog (saturation).
    position = {event_id: i * 10 // len(expected) for i, event_id in enumerate(expected)}
    by_tenth: list[list[float]] = [[] for _ in range(10)]
    for c in pool:
        for k, v in c.latency.items():
            if k in position:
                by_tenth[position[k]].append(v)
    # Per event: when the first client got it (the path up to the fan-out) and the spread to the last.
    per_event: dict[int, list[float]] = {}
    for c in pool:
        for k, v in c.latency.items():
            per_event.setdefault(k, []).append(v)
    # Where p95 comes from: events published while the churned clients were away and
    # reconnecting (plus 1 s after) against the rest of the run, and p95 per tenth of the run.
    published_at = dict(zip(expected, published.get("times", ()), strict=False))
    in_churn: list[float] = []
    steady: list[float] = []
    if churn_window is not None:
        lo, hi = churn_window[0], churn_window[1] + 1.0
        for c in pool:
            for k, v in c.latency.items():
                if k in published_at:
                    (in_churn if lo <= published_at[k] <= hi else steady).append(v)
    firsts = [min(v) for v in per_event.values()]
    spreads = [max(v) - min(v) for v in per_event.values()]
    total = len(expected) * clients
    ms = lambda s: round(s * 1000, 2)  # noqa: E731
    return {
        "clients": clients,
        "events": len(expected),
        "publish_seconds": published["seconds"],
        "expected": total,
        "delivered_live": live,
        "delivered_after_replay": after_replay,
        "delivered_ratio_live": round(live / total, 6),
        "delivered_ratio": round(after_replay / total, 6),
        "clients_dropped_mid_run": len(churned),
        "clients_caught_up_after_run": len(missing_clients),
        "connect_retries": clients_mod.RETRIES["connect"],
        "load_average_1min_at_start": round(load_before, 2),
        "server_cpu_seconds": round(server_cpu, 2),
        "server_cpu_us_per_frame_delivered": round(server_cpu * 1e6 / max(live, 1), 1),
        "bench_clients_cpu_seconds": round(client_cpu, 2),
        "frames_delivered_by_replay": sum(len(expected_set & (c.recovered - c.latency.keys())) for c in pool),
        "latency_ms": {
            "p50": ms(clients_mod.percentile(latencies, 0.50)),
            "p95": ms(clients_mod.percentile(latencies, 0.95)),
            "p99": ms(clients_mod.percentile(latencies, 0.99)),
            "max": ms(max(latencies)) if latencies else None,
            "p50_by_tenth_of_run": [ms(clients_mod.percentile(t, 0.5)) for t in by_tenth],
            "p95_by_tenth_of_run": [ms(clients_mod.percentile(t, 0.95)) for t in by_tenth],
            "churn_window_seconds": round(churn_window[1] - churn_window[0], 2) if churn_window else None,
            "p95_events_published_in_churn_window": ms(clients_mod.percentile(in_churn, 0.95)) if in_churn else None,
            "p95_events_published_outside_churn_window": ms(clients_mod.percentile(steady, 0.95)) if steady else None,
            "first_client_p50": ms(clients_mod.percentile(firsts, 0.5)),
            "first_client_p95": ms(clients_mod.percentile(firsts, 0.95)),
            "first_to_last_spread_p50": ms(clients_mod.percentile(spreads, 0.5)),
            "first_to_last_spread_p95": ms(clients_mod.percentile(spreads, 0.95)),
        },
    }


# --- orchestration ------------------------------------------------------------------------------


def _session_cookie() -> str:
    """A logged-in session for a bench user, stored in the database the server reads."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import Group, User
    from django.contrib.sessions.backends.db import SessionStore

    from core.access import OPERATOR

    user, _ = User.objects.get_or_create(username="bench-events")
    user.groups.add(Group.objects.get_or_create(name=OPERATOR)[0])  # the stream needs a role
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return session.session_key


def _start_server(kind: str, port: int, workers: int = 1, deflate: bool = False, ws: str = "auto") -> subprocess.Popen:
    target = "aria_project.asgi:application"
    if kind == "uvicorn":
        # As README's production command: no lifespan, permessage-deflate off unless --deflate.
        cmd = [
            sys.executable,
            "-m",
            "uvicorn",
            target,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--lifespan",
            "off",
            "--log-level",
            "warning",
            "--ws-per-message-deflate",
            str(deflate).lower(),
            "--workers",
            str(workers),
            "--ws",
            ws,
        ]
    else:
        cmd = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "-v", "0", target]
    # Its own process group: stopping it stops uvicorn's worker processes too (a supervisor killed
    # after the 15 s grace left its workers running, still serving their sockets).
    return subprocess.Popen(cmd, cwd=ROOT, env=os.environ.copy(), start_new_session=True)


def _wait_ready(base: str, timeout: float = 60) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(base + "/readyz", timeout=5).status_code == 200:
                return
        time.sleep(0.3)
    raise RuntimeError("server did not become ready")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=25.0, help="events per second published")
    parser.add_argument(
        "--server", choices=["daphne", "uvicorn"], default="uvicorn", help="uvicorn: README's production server"
    )
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes (each fans out itself)")
    parser.add_argument(
        "--ws",
        default="auto",
        choices=["auto", "websockets", "websockets-sansio", "wsproto"],
        help="uvicorn's WebSocket implementation (auto: uvicorn's choice, websockets-sansio with websockets installed)",
    )
    parser.add_argument(
        "--deflate",
        action="store_true",
        help="uvicorn negotiates permessage-deflate (off in README's production command: it compresses "
        "every frame once per socket)",
    )
    parser.add_argument("--drain", type=float, default=15.0, help="seconds to wait for stragglers")
    parser.add_argument(
        "--churn",
        type=float,
        default=0.1,
        help="fraction of the N clients dropped for 1 s mid-run (reconnect with ?after=)",
    )
    parser.add_argument(
        "--no-batch",
        action="store_true",
        help="clients connect without ?batch=1 (one event per WebSocket message, the pre-batch protocol)",
    )
    parser.add_argument(
        "--client",
        choices=["lean", "websockets"],
        default="lean",
        help="the bench's WebSocket client: lean (bench/bench_ws.py, cheap per message) or the websockets library",
    )
    parser.add_argument("--publish", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--tag", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.publish is not None:
        run_publisher(args.publish, args.rate, args.tag)
        return 0
    clients_mod.BATCH["on"] = not args.no_batch
    clients_mod.CLIENT["kind"] = args.client

    if not os.environ.get("DATABASE_URL", "").startswith("postgres") or not os.environ.get("REDIS_URL"):
        print("Set DATABASE_URL (PostgreSQL) and REDIS_URL: this measures channels-redis.", file=sys.stderr)
        return 2
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))  # the server checks our session
    os.environ.setdefault("ARIA_EMBEDDED_WORKER", "false")
    # As in production: DEBUG off (with it on, Django keeps every query of the server's outbox
    # reads), and no INFO line per WebSocket connect.
    os.environ.setdefault("DJANGO_DEBUG", "false")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    _setup_django()
    import logging

    from django.core.management import call_command

    logging.getLogger("httpx").setLevel(logging.WARNING)
    call_command("migrate", verbosity=0, interactive=False)
    cookie = _session_cookie()
    port = topology.free_port()
    base = f"http://127.0.0.1:{port}"
    headers = {"Cookie": f"sessionid={cookie}", "Origin": base}
    if args.workers > 1 and args.server != "uvicorn":
        parser.error("--workers needs --server uvicorn")
    if args.deflate and (args.server != "uvicorn" or args.client != "websockets"):
        parser.error("--deflate needs --server uvicorn --client websockets (the lean client offers no compression)")
    server = _start_server(args.server, port, args.workers, args.deflate, args.ws)
    try:
        _wait_ready(base)
        phase = dict(
            base=base,
            headers=headers,
            events=args.events,
            rate=args.rate,
            drain=args.drain,
            churn=args.churn,
            server_pid=server.pid,
        )
        baseline = clients_mod.run(run_phase(clients=1, **phase))
        fanout = clients_mod.run(run_phase(clients=args.clients, **phase))
    finally:
        topology.stop_group(server, 15)
    ratio = fanout["latency_ms"]["p95"] / baseline["latency_ms"]["p95"]
    result = {
        "benchmark": "event_bus",
        "server": args.server,
        "server_workers": args.workers,
        "server_websocket_implementation": args.ws,
        "permessage_deflate": args.deflate,
        "bench_client": f"{args.client} on {clients_mod.LOOP_NAME}, all clients in one process",
        "channel_layer": "channels_redis",
        "client_protocol": "?batch=1 (as events.js)" if clients_mod.BATCH["on"] else "one event per message",
        "database": "postgresql",
        "cpus": os.cpu_count(),
        "rate_per_second": args.rate,
        "baseline_1_client": baseline,
        f"fanout_{args.clients}_clients": fanout,
        "p95_ratio": round(ratio, 2),
        # issue 13's goals, each beside its figure.
        "goals": {
            "p95_ratio_to_1_client": {"figure": round(ratio, 2), "goal": "<= 3.0", "met": ratio <= 3.0},
            "delivered_ratio_after_replay": {
                "figure": fanout["delivered_ratio"],
                "goal": "== 1.0 (1 client too)",
                "met": fanout["delivered_ratio"] == 1.0 and baseline["delivered_ratio"] == 1.0,
            },
        },
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
