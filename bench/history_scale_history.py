"""History and trend parts of bench/history_scale.py: generated history loaded by COPY into the
partitioned samples table and a flat baseline table, the rollup over it, trend reads at each
range against the flat table, and disk per signal-day. Needs Django set up (imported by
bench/history_scale.py).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

import psycopg
from django.conf import settings
from django.db import connection, models

from sentinel import selectors
from sentinel.history import reading
from sentinel.history.partitions import partitions_ensure, partitions_list
from sentinel.history.rollups import history_rollup
from sentinel.history.schema import ROLLUP_HOUR, ROLLUP_MINUTE, SAMPLES
from sentinel.models import Cell, Line, SignalDefinition, Site

GOAL_P95_MS = 50.0
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


def flat_table_create() -> None:
    """As the samples table was before partitioning: surrogate id, (signal, time) unique, FK."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TABLE IF NOT EXISTS {FLAT} (id bigserial PRIMARY KEY, signal_id bigint NOT NULL "
            "REFERENCES sentinel_signaldefinition (id) DEFERRABLE INITIALLY DEFERRED, "
            "time timestamptz NOT NULL, value float8 NOT NULL, UNIQUE (signal_id, time))"
        )


def load_history(ids: list[int], *, days: int, interval: int, end) -> dict[str, float]:
    """COPY the same rows into the partitioned samples table and the flat baseline table."""
    start = end - timedelta(days=days)
    partitions_ensure(now=end, since=start)
    flat_table_create()
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
