"""The API leg of bench/history_scale.py: --signals signals × --api-seconds ticks (1 Hz) posted to
`POST /api/v1/signals/samples` in-process (batches of ≤ 5,000) as fast as they are answered by
--api-clients concurrent clients (gateways, each posting the same signals every tick), then
the rollup of those minutes; rows/s ÷ signals (real time = 1.0; goal ≥ 1.2), and the same batches
COPYed into the partitioned and the flat table. Needs Django set up (imported by
bench/history_scale.py).
"""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta

import psycopg
from django.contrib.auth.models import Group, User
from django.db import connection
from django.test import Client
from django.utils import timezone

from bench.history_scale_history import FLAT, conninfo, flat_table_create, make_signals
from core.access import OPERATOR
from core.models import ApiToken
from sentinel.history.buckets import MINUTE, aligned
from sentinel.history.rollups import history_rollup
from sentinel.history.schema import SAMPLES

GOAL_REALTIME = 1.2


def api_ingest(n_signals: int, seconds: int, clients: int = 1) -> dict[str, object]:
    ids = [s.pk for s in make_signals(n_signals, "API")]
    user = User.objects.create_user("bench-history-feed")
    user.groups.add(Group.objects.get_or_create(name=OPERATOR)[0])
    raw = ApiToken.generate_key()
    ApiToken.objects.create(user=user, name="bench", key_prefix=raw[:12], key_hash=ApiToken.hash_key(raw))
    client = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    start = aligned(timezone.now(), MINUTE) - timedelta(seconds=seconds + 60)
    warm_start, start = start, start + timedelta(seconds=1)
    # Like `clients` gateways: slice k of every tick (5,000 signals) always goes through the same
    # client, so each signal's samples arrive in order; the clients post at once, each in a thread.
    bodies: list[list[bytes]] = [[] for _ in range(clients)]
    for tick in range(seconds):
        t = (start + timedelta(seconds=tick)).isoformat()
        # Normal values (no alarms): this measures the storage path, not alarm handling.
        samples = [{"signal_id": sid, "time": t, "value": round(2.5 + (sid + tick) % 50 / 100, 2)} for sid in ids]
        for k, i in enumerate(range(0, len(samples), 5000)):
            bodies[k % clients].append(json.dumps({"samples": samples[i : i + 5000]}).encode())
    warm = json.dumps({"samples": [{"signal_id": ids[0], "time": warm_start.isoformat(), "value": 2.0}]}).encode()
    client.post("/api/v1/signals/samples", data=warm, content_type="application/json")  # first-request setup
    failures: list[str] = []

    def gateway(mine: list[bytes]) -> None:
        own = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
        try:
            for body in mine:
                response = own.post("/api/v1/signals/samples", data=body, content_type="application/json")
                if response.status_code != 200:
                    failures.append(f"API returned {response.status_code}: {response.content[:300]!r}")
                    return
        finally:
            connection.close()

    threads = [threading.Thread(target=gateway, args=(mine,)) for mine in bodies]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise SystemExit(failures[0])
    with connection.cursor() as cursor:  # every posted row stored (the clients' answers said so; check)
        cursor.execute(f"SELECT count(*) FROM {SAMPLES} WHERE signal_id = ANY(%s) AND time >= %s", [ids, start])
        if (stored := cursor.fetchone()[0]) != n_signals * seconds:
            raise SystemExit(f"API leg: {stored} rows stored of {n_signals * seconds} posted")
    flat_table_create()
    copy_rates = copy_batches(ids, start - timedelta(hours=2), seconds)
    rolled = time.perf_counter()
    minutes = history_rollup(now=timezone.now(), batch=10_000).minutes
    roll_s = time.perf_counter() - rolled
    ratio = n_signals * seconds / elapsed / n_signals
    return {
        "signals": n_signals,
        "clients": clients,
        "seconds_of_data": seconds,
        "rows_per_s": round(n_signals * seconds / elapsed),
        "realtime_ratio": round(ratio, 2),
        "goal": f">= {GOAL_REALTIME}",
        "goal_met": ratio >= GOAL_REALTIME,
        "rollup_seconds_per_minute_of_data": round(roll_s / max(minutes, 1), 3),
        **copy_rates,
    }


def copy_batches(ids: list[int], start, seconds: int) -> dict[str, int]:
    """What partitions + the dirty-minute trigger cost the ingest shape (a batch = one tick of every
    signal): the same batches COPYed into the samples table and into the flat table."""
    rates = {}
    with psycopg.connect(conninfo()) as conn:
        for name, table in (("partitioned", SAMPLES), ("flat", FLAT)):
            started = time.perf_counter()
            for tick in range(seconds):
                t = start + timedelta(seconds=tick)
                for i in range(0, len(ids), 5000):
                    with conn.cursor() as cur, cur.copy(f"COPY {table} (signal_id, time, value) FROM STDIN") as copy:
                        for sid in ids[i : i + 5000]:
                            copy.write_row((sid, t, 2.5))
                    conn.commit()
            rates[f"copy_batches_rows_per_s_{name}"] = round(len(ids) * seconds / (time.perf_counter() - started))
    return rates
