"""Sentinel scan vs. a raw SQL read of the latest value per signal, in the same run.

    DATABASE_URL=postgres://… .venv/bin/python bench/sentinel_scan.py \
        [--signals 10000,100000] [--history 1000000] [--breaching 0.01] [--repeat 5]

For each N: N enabled signals on onboarded cells (10 per cell), 1 % breaching (alert 4.5, trip 7.1),
fresh latest rows, and `--history` samples of history spread over the signals. The first scan
raises the alarms of the breaching 1 % (reported separately: each raise writes an audit record and
runs the workorders receivers). Then steady-state scans are timed (median of --repeat) against:

- baseline_history: the raw SQL read of the latest value per signal from the history
  (`SELECT DISTINCT ON (signal_id) … ORDER BY signal_id, time DESC`) — what a scan without the
  latest-value table would do. Goal: scan ÷ this ≤ 1.5.
- baseline_latest_table: a raw `SELECT signal_id, time, value FROM sentinel_signallatest`
  (the cheapest possible read of N latest values; reported, stricter than the goal).

Queries per scan must be equal for every N. Uses a throwaway database (`<name>_bench_scan` on
PostgreSQL, a temp file on SQLite); scale down with --signals 2000 --history 100000.

    DATABASE_URL=postgres://… REDIS_URL=redis://… .venv/bin/python bench/sentinel_scan.py --workers 2 \
        [--signals 100000] [--groups N] [--rounds 10]

Scale-out (`--workers N`): after the alarms of the breaching 1 % are raised, steady-state scan
rounds run on real Celery worker processes (`celery worker -P solo`, one task at a time each):
each round is the --groups cell-group tasks `sentinel.scan` fans out (`sentinel.scan_group`),
enqueued together, the round over when every group has answered. The same rounds run on one
worker, then on N; throughput = signals scanned per second. Goal: N=2 ≥ 1.6 × one worker, and
no alarm raised twice (the alarm count stays the breaching count). Also reported, stricter: N
workers against one worker scanning the whole plant in one task per round (`sentinel.scan` with
ARIA_SCAN_GROUPS=1, no split at all), which also charges whatever the split itself costs. The
plant's latest-value rows are stamped with their scan bucket before the rounds (what the first
group scans do on a live plant) and vacuumed, so the rounds are steady state.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
if not os.environ.get("DATABASE_URL"):
    os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp(prefix='aria-bench-')}/bench.sqlite3"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aria_project.settings")
os.environ.setdefault("ARIA_ENGINE", "fake")
# Building 100k signals takes longer than 3 default intervals: keep the fresh plant from going stale.
os.environ.setdefault("ARIA_SENTINEL_INTERVAL", "3600")

import django

django.setup()

from django.db import connection, reset_queries  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from sentinel.models import Alarm, Cell, Line, SignalDefinition, SignalLatest, SignalSample, Site  # noqa: E402
from sentinel.services import sentinel_scan  # noqa: E402
from sentinel.services.scan import CellGroup, latest_buckets_stamp  # noqa: E402

GOAL_RATIO = 1.5
GOAL_SCALING = 1.6
ROOT = Path(__file__).resolve().parents[1]
SIGNALS_PER_CELL = 10


def setup_database() -> None:
    connection.settings_dict.setdefault("TEST", {})
    name = connection.settings_dict["NAME"]
    connection.settings_dict["TEST"]["NAME"] = f"{name}_bench_scan"
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)


def teardown_database(old_name: str) -> None:
    if connection.vendor == "postgresql":
        connection.creation.destroy_test_db(old_name, verbosity=0)


def _copy(table: str, columns: str, rows) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor, cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
    else:
        rows = list(rows)
        marks = ", ".join(["%s"] * len(rows[0]))
        with connection.cursor() as cursor:
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)


def build_plant(n: int, history: int, breaching: float) -> list[int]:
    """Fresh plant of n signals; returns the ids of the breaching ones."""
    tables = [m._meta.db_table for m in (Alarm, SignalSample, SignalLatest, SignalDefinition, Cell, Line, Site)]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"TRUNCATE {', '.join(tables)} CASCADE")
        else:
            for model in (Alarm, SignalSample, SignalLatest, SignalDefinition, Cell, Line, Site):
                model.objects.all().delete()
    site = Site.objects.create(name="Bench")
    line = Line.objects.create(site=site, name="L")
    cells = Cell.objects.bulk_create(
        [
            Cell(line=line, tag=f"B-{i:06d}", name="bench", onboarding_complete=True)
            for i in range(n // SIGNALS_PER_CELL)
        ]
    )
    signals = SignalDefinition.objects.bulk_create(
        [
            SignalDefinition(
                cell=cells[i // SIGNALS_PER_CELL], key=f"s{i % SIGNALS_PER_CELL}", display_name="s", alert=4.5, trip=7.1
            )
            for i in range(len(cells) * SIGNALS_PER_CELL)
        ],
        batch_size=5000,
    )
    ids = [s.pk for s in signals]
    rng = random.Random(1)
    hot = set(rng.sample(ids, max(1, int(len(ids) * breaching))))
    now = timezone.now()
    per_signal = max(1, history // len(ids))
    _copy(
        SignalSample._meta.db_table,
        "signal_id, time, value",
        (
            (sid, now - timedelta(seconds=(per_signal - k) * 10), 2.0 + rng.random() * 0.2)
            for sid in ids
            for k in range(per_signal)
        ),
    )
    _copy(
        SignalLatest._meta.db_table,
        "signal_id, time, value, stale",
        ((sid, now, 5.0 if sid in hot else 2.0, False) for sid in ids),
    )
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("ANALYZE")
    return sorted(hot)


def timed(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def raw_latest_from_history() -> int:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT DISTINCT ON (signal_id) signal_id, time, value FROM sentinel_signalsample "
                "ORDER BY signal_id, time DESC"
            )
        else:
            cursor.execute(
                "SELECT s.signal_id, s.time, s.value FROM sentinel_signalsample s JOIN "
                "(SELECT signal_id, MAX(time) AS t FROM sentinel_signalsample GROUP BY signal_id) m "
                "ON m.signal_id = s.signal_id AND m.t = s.time"
            )
        return len(cursor.fetchall())


def raw_latest_table() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT signal_id, time, value FROM sentinel_signallatest")
        return len(cursor.fetchall())


def bench_one(n: int, history: int, breaching: float, repeat: int) -> dict:
    started = time.perf_counter()
    hot = build_plant(n, history, breaching)
    build_s = time.perf_counter() - started
    first_queries = 0

    def count(execute, sql, params, many, context):  # the debug query log stops at 9000 entries
        nonlocal first_queries
        first_queries += 1
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        started = time.perf_counter()
        first = sentinel_scan()
        first_s = time.perf_counter() - started
    assert sorted(Alarm.objects.values_list("signal_id", flat=True)) == hot, "every breaching signal alarmed once"
    reset_queries()
    with CaptureQueriesContext(connection) as steady_q:
        again = sentinel_scan()
    assert again.evaluation.raised == [] and again.evaluation.cleared == []
    scan_s = timed(sentinel_scan, repeat)
    history_s = timed(raw_latest_from_history, repeat)
    latest_s = timed(raw_latest_table, repeat)
    return {
        "signals": n,
        "breaching": len(hot),
        "history_samples": SignalSample.objects.count(),
        "build_s": round(build_s, 2),
        "first_scan_ms": round(first_s * 1000, 2),
        "first_scan_alarms_raised": len(first.evaluation.raised),
        "first_scan_queries": first_queries,
        "scan_ms": round(scan_s * 1000, 3),
        "queries_per_scan": len(steady_q.captured_queries),
        "baseline_history_ms": round(history_s * 1000, 3),
        "baseline_latest_table_ms": round(latest_s * 1000, 3),
        "ratio_vs_history": round(scan_s / history_s, 4),
        "ratio_vs_latest_table": round(scan_s / latest_s, 4),
    }


# Scale-out across worker processes ------------------------------------------------------------

_WORKER_SETTINGS = """from aria_project.settings import *  # noqa: F403
CELERY_RESULT_BACKEND = REDIS_URL  # noqa: F405  (the bench waits on the group tasks' results)
CELERY_TASK_IGNORE_RESULT = False
"""


def _start_workers(count: int, queue: str, settings_dir: str) -> list[subprocess.Popen]:
    from aria_project.celery import app

    env = {
        **os.environ,
        "DATABASE_URL": _database_url(connection.settings_dict["NAME"]),
        "DJANGO_SETTINGS_MODULE": "bench_scan_settings",
        "ARIA_SCAN_GROUPS": "1",  # `sentinel.scan` scans the whole plant itself (the full-scan baseline)
        "PYTHONPATH": os.pathsep.join([settings_dir, str(ROOT)]),
    }
    workers, names = [], []
    for k in range(count):
        name = f"bench-scan-{os.getpid()}-{k}@{socket.gethostname()}"
        command = [sys.executable, "-m", "celery", "-A", "aria_project", "worker", "-P", "solo", "-Q", queue, "-n",
                   name, "-l", "warning", "--without-heartbeat", "--without-mingle", "--without-gossip"]  # fmt: skip
        workers.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL))
        names.append(name)
    deadline = time.monotonic() + 120
    while len(app.control.ping(destination=names, timeout=1.0)) < count:
        if time.monotonic() > deadline or any(w.poll() is not None for w in workers):
            _stop_workers(workers)
            raise SystemExit("bench: the celery workers did not start")
    return workers


def _stop_workers(workers: list[subprocess.Popen]) -> None:
    for worker in workers:
        worker.terminate()
    for worker in workers:
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()


def _database_url(name: str) -> str:
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


def _rounds(groups: int, rounds: int, queue: str) -> tuple[float, int]:
    """Seconds for `rounds` scan rounds of `groups` group tasks each (groups=0: one whole-plant
    `sentinel.scan` task per round), and the alarms they raised."""
    from celery import group as celery_group

    from sentinel.tasks import scan_group_task, scan_task

    raised = 0
    started = time.perf_counter()
    for _ in range(rounds):
        tasks = [scan_group_task.s(i, groups) for i in range(groups)] if groups else [scan_task.s()]
        result = celery_group(tasks).apply_async(queue=queue)
        raised += sum(len(summary["raised"]) for summary in result.get(timeout=600, interval=0.01))
    return time.perf_counter() - started, raised


def run_scaling(args: argparse.Namespace) -> None:
    if connection.vendor != "postgresql" or not os.environ.get("REDIS_URL"):
        raise SystemExit("--workers needs DATABASE_URL=postgres://… and REDIS_URL (real worker processes)")
    from django.conf import settings

    from aria_project.celery import app

    n = int((args.signals or "100000").split(",")[0])
    args.groups = args.groups or args.workers
    queue = f"aria-bench-scan-{os.getpid()}"
    app.conf.update(result_backend=settings.REDIS_URL, task_ignore_result=False)
    settings_dir = tempfile.mkdtemp(prefix="aria-bench-scan-")
    Path(settings_dir, "bench_scan_settings.py").write_text(_WORKER_SETTINGS)
    old_name = connection.settings_dict["NAME"]
    setup_database()
    settings.DEBUG = False
    runs = {}
    try:
        hot = build_plant(n, min(args.history, n), args.breaching)
        latest_buckets_stamp(group=CellGroup(0, 1))  # every row's bucket, as the first group scans stamp it
        with connection.cursor() as cursor:
            cursor.execute(f"VACUUM ANALYZE {SignalLatest._meta.db_table}")
        sentinel_scan()  # raise the breaching 1 %: the rounds below are steady-state scans
        connection.close()  # the workers use their own connections
        for key, count, groups in (("full", 1, 0), (1, 1, args.groups), (args.workers, args.workers, args.groups)):
            workers = _start_workers(count, queue, settings_dir)
            try:
                _rounds(groups, 1, queue)  # warm-up: imports, connections, plans
                seconds, raised = _rounds(groups, args.rounds, queue)
            finally:
                _stop_workers(workers)
            runs[key] = {"workers": count, "groups": groups or 1, "seconds": round(seconds, 3), "raised": raised,
                         "signals_per_s": round(n * args.rounds / seconds)}  # fmt: skip
        alarms = Alarm.objects.count()
    finally:
        teardown_database(old_name)
    scaling = runs[args.workers]["signals_per_s"] / runs[1]["signals_per_s"]
    scaling_full = runs[args.workers]["signals_per_s"] / runs["full"]["signals_per_s"]
    goal = GOAL_SCALING if args.workers == 2 else GOAL_SCALING * args.workers / 2
    print(
        json.dumps(
            {
                "bench": "sentinel_scan_workers",
                "database": connection.vendor,
                "goal": f"{args.workers} workers >= {goal:g} x one worker's signals/s; no alarm raised twice",
                "signals": n,
                "breaching": len(hot),
                "groups": args.groups,
                "rounds": args.rounds,
                "one_worker": runs[1],
                "n_workers": runs[args.workers],
                "scaling": round(scaling, 3),
                "one_worker_whole_plant": runs["full"],
                "scaling_vs_whole_plant_scan": round(scaling_full, 3),
                "split_cost": round(runs["full"]["signals_per_s"] / runs[1]["signals_per_s"], 3),
                "alarms": alarms,
                "no_alarm_twice": alarms == len(hot) and all(r["raised"] == 0 for r in runs.values()),
                "goal_met": scaling >= goal and alarms == len(hot),
            },
            indent=2,
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--signals", default=None, help="comma list of signal counts (default 10000,100000)")
    parser.add_argument("--history", type=int, default=1_000_000, help="history samples per run")
    parser.add_argument("--breaching", type=float, default=0.01)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--workers", type=int, default=0, help="scale-out run: N worker processes vs one")
    parser.add_argument("--groups", type=int, default=0, help="cell groups per round (--workers; default N)")
    parser.add_argument("--rounds", type=int, default=10, help="timed scan rounds per worker count (--workers)")
    args = parser.parse_args()
    if args.workers:
        run_scaling(args)
        return
    args.signals = args.signals or "10000,100000"
    from django.conf import settings

    old_name = connection.settings_dict["NAME"]
    setup_database()
    settings.DEBUG = False
    try:
        runs = [bench_one(int(n), args.history, args.breaching, args.repeat) for n in args.signals.split(",")]
    finally:
        teardown_database(old_name)
    queries = {r["queries_per_scan"] for r in runs}
    worst = max(r["ratio_vs_history"] for r in runs)
    print(
        json.dumps(
            {
                "bench": "sentinel_scan",
                "database": connection.vendor,
                "goal": f"steady-state scan time / raw SQL latest-per-signal read <= {GOAL_RATIO}; queries constant in N",
                "runs": runs,
                "worst_ratio_vs_history": worst,
                "worst_ratio_vs_latest_table": max(r["ratio_vs_latest_table"] for r in runs),
                "queries_constant": len(queries) == 1,
                "goal_met": worst <= GOAL_RATIO and len(queries) == 1,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
