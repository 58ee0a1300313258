"""History at plant scale (PostgreSQL): trend reads at each range against the flat raw table, disk
per day with rollups and retention, and sustained ingest through the API relative to real time.

    DATABASE_URL=postgres://… .venv/bin/python bench/history_scale.py [--days 30] [--signals 20]
        [--interval 10] [--repeat 40] [--api-signals 5000] [--api-seconds 20]
    CI (small): … bench/history_scale.py --days 2 --signals 200 --interval 60 --api-signals 1000 --api-seconds 5

1. History: --days of samples for --signals signals, one every --interval seconds, loaded by COPY
   into the partitioned samples table (partitions created for the range first; the dirty-minute
   trigger fires as for any writer) and, as the baseline, into a flat table shaped like the old
   one (surrogate id, unique (signal, time), foreign key). Then the rollup runs over everything.
2. Trend reads: `sentinel.selectors.trends` for one signal (rotating) over the last 1 h / 24 h /
   30 d (100 buckets), p95 of --repeat calls each, against the same selector reading every range
   raw from the flat table (as before rollups), calls interleaved. Goal: p95 ≤ 50 ms per range.
3. Disk: bytes per day of raw partitions, minute and hour rollups (measured), and the steady
   state under the retention settings; extrapolated per signal at 1 Hz.
4. Ingest: --api-signals signals × --api-seconds ticks (1 Hz) posted to `POST /api/v1/signals/samples`
   in-process (batches of ≤ 5,000), then the rollup of those minutes; rows/s ÷ signals
   (real time = 1.0; goal ≥ 1.2), and rollup seconds per minute of data.

Uses a throwaway database `<name>_bench_history`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aria_project.settings")
os.environ.setdefault("ARIA_ENGINE", "fake")
if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
    sys.exit("bench/history_scale.py needs DATABASE_URL=postgres://… (partitions are PostgreSQL's)")

import django

django.setup()

import psycopg  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.auth.models import Group, User  # noqa: E402
from django.db import connection, models  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from core.access import OPERATOR  # noqa: E402
from core.models import ApiToken  # noqa: E402
from sentinel import selectors  # noqa: E402
from sentinel.history import reading  # noqa: E402
from sentinel.history.buckets import MINUTE, aligned  # noqa: E402
from sentinel.history.partitions import partitions_ensure, partitions_list  # noqa: E402
from sentinel.history.rollups import history_rollup  # noqa: E402
from sentinel.history.schema import ROLLUP_HOUR, ROLLUP_MINUTE, SAMPLES  # noqa: E402
from sentinel.models import Cell, Line, SignalDefinition, Site  # noqa: E402

GOAL_P95_MS = 50.0
GOAL_REALTIME = 1.2
RANGES = {"1h": 60, "24h": 24 * 60, "30d": 30 * 24 * 60}
FLAT = "bench_flat_samples"
BUCKETS = 100


def conninfo() -> str:
    s = connection.settings_dict
    parts = {"dbname": s["NAME"], "user": s["USER"], "password": s["PASSWORD"], "host": s["HOST"], "port": s["PORT"]}
    return " ".join(f"{k}={v}" for k, v in parts.items() if v)


def make_signals(n: int, prefix: str) -> list[SignalDefinition]:
    site, _ = Site.objects.get_or_create(name="Bench")
    line, _ = Line.objects.get_or_create(site=site, name=prefix)
    cells = Cell.objects.bulk_create(
        [
            Cell(line=line, tag=f"{prefix}-{i:05d}", name="bench", onboarding_complete=True)
            for i in range(math.ceil(n / 10))
        ]
    )
    return SignalDefinition.objects.bulk_create(
        [
            SignalDefinition(
                cell=cells[i // 10], key=f"s{i % 10}", display_name="s", low_alert=1.0, alert=4.5, trip=7.1
            )
            for i in range(n)
        ]
    )


def value_at(signal_id: int, second: int) -> float:
    """A slow daily wave with a little deterministic noise; rare excursions above the alert."""
    wave = 3.0 + math.sin(second / 86400 * 2 * math.pi + signal_id) * 0.8
    return round(wave + ((signal_id * 7919 + second) % 97) / 200 + (1.5 if second % 86400 < 120 else 0.0), 4)


def load_history(ids: list[int], *, days: int, interval: int, end) -> dict[str, float]:
    """COPY the same rows into the partitioned samples table and the flat baseline table."""
    start = end - timedelta(days=days)
    partitions_ensure(now=end, since=start)
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {FLAT}")
        cursor.execute(
            # As the samples table was before partitioning: surrogate id, (signal, time) unique, FK.
            f"CREATE TABLE {FLAT} (id bigserial PRIMARY KEY, signal_id bigint NOT NULL "
            "REFERENCES sentinel_signaldefinition (id) DEFERRABLE INITIALLY DEFERRED, "
            "time timestamptz NOT NULL, value float8 NOT NULL, UNIQUE (signal_id, time))"
        )
    steps = days * 86400 // interval
    seconds = {}
    with psycopg.connect(conninfo()) as conn:
        for table in (SAMPLES, FLAT):
            started = time.perf_counter()
            for sid in ids:  # one transaction per signal, rows in time order
                with conn.cursor() as cur, cur.copy(f"COPY {table} (signal_id, time, value) FROM STDIN") as copy:
                    for k in range(steps):
                        second = k * interval
                        copy.write_row((sid, start + timedelta(seconds=second), value_at(sid, second)))
                conn.commit()
            seconds[table] = time.perf_counter() - started
        with conn.cursor() as cur:
            cur.execute(f"ANALYZE {SAMPLES}; ANALYZE {FLAT}")
        conn.commit()
    rows = steps * len(ids)
    return {
        "rows": rows,
        "copy_rows_per_s_partitioned": round(rows / seconds[SAMPLES]),
        "copy_rows_per_s_flat": round(rows / seconds[FLAT]),
    }


def roll_everything(end) -> dict[str, float]:
    started, minutes = time.perf_counter(), 0
    while True:
        step = history_rollup(now=end, batch=1440)
        if not step.minutes:
            break
        minutes += step.minutes
    with connection.cursor() as cursor:  # what autovacuum does to the drained log in production
        cursor.execute("VACUUM ANALYZE sentinel_historydirtyminute")
    return {"minutes_rolled": minutes, "rollup_seconds": round(time.perf_counter() - started, 2)}


class FlatSample(models.Model):
    """The baseline table: every sample in one unpartitioned table, as before partitioning."""

    signal = models.ForeignKey(SignalDefinition, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+")
    time = models.DateTimeField()
    value = models.FloatField()

    class Meta:
        app_label = "sentinel"
        managed = False
        db_table = FLAT


@contextmanager
def flat_table() -> Iterator[None]:
    """The selector as it was before rollups: every range read raw, from the flat table."""

    def raw_window(*, minutes: int, buckets: int, end: datetime) -> reading.TrendWindow:
        start = end - timedelta(minutes=minutes)
        return reading.TrendWindow("raw", start, end, minutes * 60 / buckets, buckets, raw=[(start, end)])

    model, window = reading.SignalSample, selectors.trend_window
    reading.SignalSample, selectors.trend_window = FlatSample, raw_window
    try:
        yield
    finally:
        reading.SignalSample, selectors.trend_window = model, window


def p95_ms(samples: list[float]) -> float:
    return (
        round(statistics.quantiles(samples, n=20)[-1] * 1000, 2) if len(samples) >= 2 else round(samples[0] * 1000, 2)
    )


def rows_read(trend: dict, minutes: int) -> int:
    """Rows the database aggregates for one signal: rollup buckets in range, or raw samples."""
    if trend["resolution"] == "raw":
        return sum(b["n"] for b in trend["buckets"])
    return math.ceil(minutes / (1 if trend["resolution"] == "1m" else 60))


def trend_reads(signals: list[SignalDefinition], *, repeat: int, end) -> dict[str, dict]:
    out = {}
    for name, minutes in RANGES.items():
        ours, flat = [], []
        for i in range(repeat):
            signal = signals[i % len(signals)]
            started = time.perf_counter()
            trend = selectors.trends([signal], minutes=minutes, buckets=BUCKETS, end=end)[0]
            ours.append(time.perf_counter() - started)
            with flat_table():
                started = time.perf_counter()
                selectors.trends([signal], minutes=minutes, buckets=BUCKETS, end=end)
                flat.append(time.perf_counter() - started)
        out[name] = {
            "resolution": trend["resolution"],
            "rows_read_per_signal": rows_read(trend, minutes),
            "p50_ms": round(statistics.median(ours) * 1000, 2),
            "flat_table_p50_ms": round(statistics.median(flat) * 1000, 2),
            "p95_ms": p95_ms(ours),
            "flat_table_p95_ms": p95_ms(flat),
            "goal_ms": GOAL_P95_MS,
            "goal_met": p95_ms(ours) <= GOAL_P95_MS,
        }
    return out


def relation_bytes(names: list[str]) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(sum(pg_total_relation_size(c)), 0) FROM unnest(%s::regclass[]) AS c", [names])
        return int(cursor.fetchone()[0])


def disk(days: int, n_signals: int, interval: int) -> dict[str, object]:
    tables = {t: [p.name for p in partitions_list(t)] + [f"{t}_default"] for t in (SAMPLES, ROLLUP_MINUTE, ROLLUP_HOUR)}
    measured = {t: relation_bytes(names) for t, names in tables.items()}
    flat = relation_bytes([FLAT])
    raw_rows = days * 86400 // interval * n_signals
    per_row = measured[SAMPLES] / raw_rows
    per_signal_day = {
        "raw_1hz": round(per_row * 86400),
        "minute_rollup": round(measured[ROLLUP_MINUTE] / days / n_signals),
        "hour_rollup": round(measured[ROLLUP_HOUR] / days / n_signals),
    }
    retention = {
        "raw": settings.ARIA_HISTORY_RETENTION_DAYS,
        "minute_rollup": settings.ARIA_HISTORY_MINUTE_ROLLUP_RETENTION_DAYS,
        "hour_rollup": settings.ARIA_HISTORY_HOUR_ROLLUP_RETENTION_DAYS,
    }
    steady = (
        per_signal_day["raw_1hz"] * retention["raw"]
        + per_signal_day["minute_rollup"] * retention["minute_rollup"]
        + per_signal_day["hour_rollup"] * retention["hour_rollup"]
    )
    return {
        "bytes_per_raw_row": round(per_row, 1),
        "flat_table_bytes_per_row": round(flat / raw_rows, 1),
        "bytes_per_signal_day": per_signal_day,
        "retention_days": retention,
        "steady_state_bytes_per_signal_1hz": steady,
        "steady_state_gb_50k_signals_1hz": round(steady * 50_000 / 1e9, 1),
        "gb_per_day_50k_signals_1hz": round(sum(per_signal_day.values()) * 50_000 / 1e9, 1),
    }


def api_ingest(n_signals: int, seconds: int) -> dict[str, object]:
    ids = [s.pk for s in make_signals(n_signals, "API")]
    user = User.objects.create_user("bench-history-feed")
    user.groups.add(Group.objects.get_or_create(name=OPERATOR)[0])
    raw = ApiToken.generate_key()
    ApiToken.objects.create(user=user, name="bench", key_prefix=raw[:12], key_hash=ApiToken.hash_key(raw))
    client = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    start = aligned(timezone.now(), MINUTE) - timedelta(seconds=seconds + 60)
    warm_start, start = start, start + timedelta(seconds=1)
    bodies = []
    for tick in range(seconds):
        t = (start + timedelta(seconds=tick)).isoformat()
        # Normal values (no alarms): this measures the storage path, not alarm handling.
        samples = [{"signal_id": sid, "time": t, "value": round(2.5 + (sid + tick) % 50 / 100, 2)} for sid in ids]
        bodies += [json.dumps({"samples": samples[i : i + 5000]}).encode() for i in range(0, len(samples), 5000)]
    warm = json.dumps({"samples": [{"signal_id": ids[0], "time": warm_start.isoformat(), "value": 2.0}]}).encode()
    client.post("/api/v1/signals/samples", data=warm, content_type="application/json")  # first-request setup
    started = time.perf_counter()
    for body in bodies:
        response = client.post("/api/v1/signals/samples", data=body, content_type="application/json")
        if response.status_code != 200:
            raise SystemExit(f"API returned {response.status_code}: {response.content[:300]!r}")
    elapsed = time.perf_counter() - started
    copy_rates = copy_batches(ids, start - timedelta(hours=2), seconds)
    rolled = time.perf_counter()
    minutes = history_rollup(now=timezone.now(), batch=10_000).minutes
    roll_s = time.perf_counter() - rolled
    ratio = n_signals * seconds / elapsed / n_signals
    return {
        "signals": n_signals,
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--signals", type=int, default=20)
    parser.add_argument("--interval", type=int, default=10, help="seconds between generated samples")
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--api-signals", type=int, default=5000)
    parser.add_argument("--api-seconds", type=int, default=20)
    args = parser.parse_args()
    settings.DEBUG = False
    old_name = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"{old_name}_bench_history"
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        end = timezone.now()
        signals = make_signals(args.signals, "H")
        loaded = load_history([s.pk for s in signals], days=args.days, interval=args.interval, end=end)
        rolled = roll_everything(end)
        reads = trend_reads(signals, repeat=args.repeat, end=end)
        space = disk(args.days, len(signals), args.interval)
        ingest = api_ingest(args.api_signals, args.api_seconds) if args.api_signals else None
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    report = {
        "bench": "history_scale",
        "database": "postgresql",
        "history": {"days": args.days, "signals": len(signals), "interval_s": args.interval, **loaded, **rolled},
        "trend_p95": reads,
        "disk": space,
        "api_ingest": ingest,
        "goals_met": all(r["goal_met"] for r in reads.values()) and (ingest is None or bool(ingest["goal_met"])),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
