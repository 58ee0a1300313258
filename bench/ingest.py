"""Ingest throughput through the API vs. a raw psycopg COPY of the same rows (PostgreSQL).

    DATABASE_URL=postgres://… .venv/bin/python bench/ingest.py [--signals 5000] [--batches 20] [--repeat 3]

Rows: --batches batches of --batch-size (default 5,000) samples for --signals signals (one sample per
signal per tick, normal values, recent times). API path: `POST /api/v1/signals/samples` through the
whole Django stack in-process (test Client: middleware, bearer-token auth, JSON parsing, validation,
the insert, the latest-value upsert and the evaluation), one request per batch, bodies serialised
before timing. Baseline: a separate raw psycopg connection that COPYs the same batches into the
same table, one transaction per batch. The table is truncated before each run; COPY and API runs
alternate (same machine load) and the best of --repeat runs of each side is compared. Goal: API rows/s ÷ COPY rows/s ≥ 0.8. Uses a throwaway database
`<name>_bench_ingest`.

`--breakdown` adds two bounds, run interleaved with the others: the same requests with the
latest-value statement skipped (what any design that keeps no per-signal state in the request
could reach at best), and with both database writes skipped (the request's own cost: Django,
auth, decoding, checks, evaluation). They are measurements of a stripped ingest, not of ARIA:
the stripped runs store no latest values (and, for the second, no samples).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aria_project.settings")
os.environ.setdefault("ARIA_ENGINE", "fake")
if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
    sys.exit("bench/ingest.py needs DATABASE_URL=postgres://… (the baseline is a PostgreSQL COPY)")

import django

django.setup()

import psycopg  # noqa: E402
from django.contrib.auth.models import Group, User  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from core.access import OPERATOR  # noqa: E402
from core.models import ApiToken  # noqa: E402
from sentinel.models import Cell, Line, SignalDefinition, SignalLatest, SignalSample, Site  # noqa: E402

GOAL_RATIO = 0.8


def conninfo() -> str:
    s = connection.settings_dict
    parts = {"dbname": s["NAME"], "user": s["USER"], "password": s["PASSWORD"], "host": s["HOST"], "port": s["PORT"]}
    return " ".join(f"{k}={v}" for k, v in parts.items() if v)


def build(n_signals: int) -> tuple[list[int], str]:
    site = Site.objects.create(name="Bench")
    line = Line.objects.create(site=site, name="L")
    cells = Cell.objects.bulk_create(
        [Cell(line=line, tag=f"B-{i:05d}", name="bench", onboarding_complete=True) for i in range(n_signals // 10)]
    )
    signals = SignalDefinition.objects.bulk_create(
        [
            SignalDefinition(
                cell=cells[i // 10], key=f"s{i % 10}", display_name="s", low_alert=1.0, alert=4.5, trip=7.1
            )
            for i in range(len(cells) * 10)
        ]
    )
    user = User.objects.create_user("bench-feed")
    user.groups.add(Group.objects.get_or_create(name=OPERATOR)[0])
    raw = ApiToken.generate_key()
    ApiToken.objects.create(user=user, name="bench", key_prefix=raw[:12], key_hash=ApiToken.hash_key(raw))
    return [s.pk for s in signals], raw


def make_batches(ids: list[int], batches: int, size: int) -> list[list[tuple]]:
    """One sample per signal per tick, ticks one second apart, ending now."""
    start = timezone.now() - timedelta(seconds=batches * size // len(ids) + 60)
    rows, out = [], []
    tick = 0
    while len(out) < batches:
        t = start + timedelta(seconds=tick)
        for k, sid in enumerate(ids):
            rows.append((sid, t, 2.0 + ((sid * 7 + tick + k) % 100) / 100))
            if len(rows) == size:
                out.append(rows)
                rows = []
                if len(out) == batches:
                    break
        tick += 1
    return out


def truncate() -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {SignalSample._meta.db_table}, {SignalLatest._meta.db_table}")


def run_copy(batches: list[list[tuple]]) -> float:
    truncate()
    with psycopg.connect(conninfo()) as conn:
        started = time.perf_counter()
        for batch in batches:
            with conn.cursor() as cur, cur.copy("COPY sentinel_signalsample (signal_id, time, value) FROM STDIN") as cp:
                for row in batch:
                    cp.write_row(row)
            conn.commit()
        return time.perf_counter() - started


@contextlib.contextmanager
def stripped(variant: str) -> Iterator[None]:
    """The ingest with parts skipped (--breakdown): "full" (nothing skipped), "no_latest" (the
    latest-value statement), "no_writes" (the COPY and the latest-value statement)."""
    from unittest import mock

    from sentinel.services import sample_store

    with contextlib.ExitStack() as stack:
        if variant in ("no_latest", "no_writes"):
            nothing = sample_store._Found(watch=set(), unknown=set(), latest_before={})
            stack.enter_context(mock.patch.object(sample_store, "_latest_upsert", lambda *a, **k: nothing))
        if variant == "no_writes":
            stack.enter_context(mock.patch.object(sample_store, "samples_write", lambda cursor, samples: len(samples)))
        yield


def run_api(bodies: list[bytes], token: str, variant: str = "full") -> float:
    truncate()
    with stripped(variant):
        return _post_all(bodies, token)


def _post_all(bodies: list[bytes], token: str) -> float:
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    started = time.perf_counter()
    for body in bodies:
        response = client.post("/api/v1/signals/samples", data=body, content_type="application/json")
        if response.status_code != 200:
            raise SystemExit(f"API returned {response.status_code}: {response.content[:300]!r}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--signals", type=int, default=5000)
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--breakdown", action="store_true", help="also time the ingest without its writes (bounds)")
    args = parser.parse_args()
    from django.conf import settings

    settings.DEBUG = False
    old_name = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"{old_name}_bench_ingest"
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        ids, token = build(args.signals)
        batches = make_batches(ids, args.batches, args.batch_size)
        bodies = [
            json.dumps({"samples": [{"signal_id": s, "time": t.isoformat(), "value": v} for s, t, v in b]}).encode()
            for b in batches
        ]
        rows = sum(len(b) for b in batches)
        # Interleaved so both sides see the same machine load; best of --repeat for each.
        copy_runs, api_runs = [], []
        bound_runs: dict[str, list[float]] = {"no_latest": [], "no_writes": []} if args.breakdown else {}
        for _ in range(args.repeat):
            for variant, runs in bound_runs.items():
                runs.append(run_api(bodies, token, variant))
            copy_runs.append(run_copy(batches))
            api_runs.append(run_api(bodies, token))
        copy_s, api_s = min(copy_runs), min(api_runs)
        assert SignalSample.objects.count() == rows and SignalLatest.objects.count() == len(ids)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    api_rate, copy_rate = rows / api_s, rows / copy_s
    ratio = api_rate / copy_rate
    per_batch = 1000 / len(batches)
    breakdown = {
        "about": "bounds, not ARIA: the same requests with parts of the ingest skipped (best of --repeat)",
        "budget_ms_per_batch_for_goal": round(copy_s * per_batch * (1 / GOAL_RATIO - 1), 2),
        **{f"ms_per_batch_{variant}": round(min(runs) * per_batch, 2) for variant, runs in bound_runs.items()},
        **{f"ratio_{variant}": round(copy_s / min(runs), 3) for variant, runs in bound_runs.items()},
    }
    print(
        json.dumps(
            {
                "bench": "ingest",
                "database": "postgresql",
                "goal": f"API rows/s / raw COPY rows/s >= {GOAL_RATIO} (batches of {args.batch_size})",
                "rows": rows,
                "batches": len(batches),
                "signals": len(ids),
                "api_seconds": round(api_s, 3),
                "copy_seconds": round(copy_s, 3),
                "api_rows_per_s": round(api_rate),
                "copy_rows_per_s": round(copy_rate),
                "ms_per_batch_api": round(api_s * 1000 / len(batches), 2),
                "ms_per_batch_copy": round(copy_s * 1000 / len(batches), 2),
                "ratio": round(ratio, 3),
                "ratio_per_repeat": [round(c / a, 3) for c, a in zip(copy_runs, api_runs, strict=True)],
                "goal_met": ratio >= GOAL_RATIO,
                **({"breakdown": breakdown} if bound_runs else {}),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
