"""Breach → open work order latency with a real Celery worker on PostgreSQL + Redis (fake engine).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/h8 REDIS_URL=redis://127.0.0.1:6379/8 \\
        .venv/bin/python bench/breach_to_order.py [--runs 20] [--warmup 2] [--keep-db]

Runs in its own database (`<name>_breach` next to DATABASE_URL's, created, migrated and seeded
with `seed_demo`; dropped afterwards unless --keep-db) and starts
`celery -A aria_project worker -P threads` as a subprocess. Each run ingests one breaching P-02
vibration sample through the ingest service (what POST /api/v1/signals/samples calls) and clocks
from just before the ingest until the work order is `open` (its transition record, written by the
worker), with the detected and analyzed stages on the way. Between runs the signal goes back to
normal, the run's work order is completed (else the next alarm would join it as a repeat alarm)
and the failure rows the run's RCA added are removed, so every run sees the same seeded history
and the next breach raises a new alarm and opens a new order. Prints one JSON object; goal: p50 ≤ 2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
GOAL_MS = 2000.0
BREACH_VALUE = 5.0  # mm/s, P-02 vibration alert limit 4.5
NORMAL_VALUE = 2.1


def bench_database_url(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    name = (parts.path.lstrip("/") or "aria") + "_breach"
    return urlunsplit(parts._replace(path="/" + name)), name


def recreate_database(url: str, name: str) -> None:
    import psycopg

    admin = urlunsplit(urlsplit(url)._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def drop_database(url: str, name: str) -> None:
    import psycopg

    admin = urlunsplit(urlsplit(url)._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def start_worker(env: dict[str, str], hostname: str, log_path: Path) -> subprocess.Popen:
    celery = Path(sys.executable).parent / "celery"
    cmd = [str(celery), "-A", "aria_project", "worker", "-P", "threads", "-c", "4", "-l", "WARNING", "-n", hostname]
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log_path.open("w"), stderr=subprocess.STDOUT)


def wait_for_worker(app: Any, hostname: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the worker exited with {proc.returncode}")
        if app.control.ping(destination=[hostname], timeout=0.5):
            return
    raise RuntimeError("the worker did not answer a ping")


def other_workers(app: Any, hostname: str) -> list[str]:
    """Other workers on the same broker would take our tasks (and skew the figures)."""
    replies = app.control.ping(timeout=1.0) or []
    return sorted(name for reply in replies for name in reply if name != hostname)


def one_run(signal_id: int, timeout: float) -> dict[str, float]:
    from django.utils import timezone

    from sentinel.models import Alarm
    from sentinel.services.ingest import samples_ingest
    from workorders.models import WorkOrder, WorkOrderEvent

    started = timezone.now()
    t0 = time.perf_counter()
    result = samples_ingest(samples=[(signal_id, started, BREACH_VALUE)])
    ingest_ms = (time.perf_counter() - t0) * 1000
    if not result.evaluation.raised:
        raise RuntimeError(f"the breach raised no alarm: {result.evaluation}")
    alarm = Alarm.objects.filter(signal_id=signal_id).order_by("-pk").first()
    deadline = time.monotonic() + timeout
    order = None
    while time.monotonic() < deadline:
        order = WorkOrder.objects.filter(triggered_by_alarm=alarm).only("pk", "status", "created_at").first()
        if order is not None and order.status not in ("detected", "analyzed"):
            break
        time.sleep(0.005)
    else:
        raise RuntimeError(
            f"work order for alarm {alarm.pk} not open after {timeout}s (status {order and order.status})"
        )
    stamps = dict(WorkOrderEvent.objects.filter(work_order=order).values_list("to_status", "created_at"))

    def since(when: Any) -> float:
        return round((when - started).total_seconds() * 1000, 1)

    return {
        "ingest_ms": round(ingest_ms, 1),
        "detected_ms": since(order.created_at),
        "analyzed_ms": since(stamps["analyzed"]),
        "open_ms": since(stamps["open"]),
    }


def back_to_normal(signal_id: int) -> None:
    from django.utils import timezone

    from sentinel.choices import OPEN_ALARM_STATES, AlarmState
    from sentinel.models import Alarm
    from sentinel.services.ingest import samples_ingest
    from workorders.choices import ACTIVE_STATUSES
    from workorders.models import FailureHistory, WorkOrder
    from workorders.services import work_order_transition

    samples_ingest(samples=[(signal_id, timezone.now(), NORMAL_VALUE)])
    # The repair is done: the next breach is a new failure with its own order (a breach while the
    # signal's order is still active would join it as a repeat alarm, with no second investigation).
    for order in WorkOrder.objects.filter(triggered_by_signal_def_id=signal_id, status__in=ACTIVE_STATUSES):
        for status in ("in_progress", "completed"):
            work_order_transition(work_order=order.pk, to_status=status, actor=None, note="bench: repaired")
    # Every run investigates the same seeded history (each RCA appends a failure row otherwise).
    FailureHistory.objects.filter(work_order__isnull=False).delete()
    # A clear the evaluation did not make (e.g. a hold-off) must not turn the next breach into a no-op.
    Alarm.objects.filter(signal_id=signal_id, state__in=OPEN_ALARM_STATES).update(
        state=AlarmState.CLEARED, cleared_at=timezone.now()
    )


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))], 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=2, help="Untimed runs first (imports, connections).")
    parser.add_argument("--timeout", type=float, default=30.0, help="Seconds one run may take.")
    parser.add_argument("--keep-db", action="store_true")
    args = parser.parse_args()

    database_url, redis_url = os.environ.get("DATABASE_URL", ""), os.environ.get("REDIS_URL", "")
    if not database_url.startswith("postgres") or not redis_url:
        print(json.dumps({"bench": "breach_to_order", "error": "set DATABASE_URL=postgres://… and REDIS_URL"}))
        return 2
    bench_url, bench_name = bench_database_url(database_url)
    recreate_database(bench_url, bench_name)
    var_dir = tempfile.mkdtemp(prefix="aria-bench-breach-")
    os.environ.update(
        DATABASE_URL=bench_url,
        ARIA_ENGINE="fake",
        ARIA_VAR_DIR=var_dir,
        DJANGO_SETTINGS_MODULE="aria_project.settings",
        ARIA_CELERY_EAGER="false",
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    from aria_project.celery import app
    from sentinel.models import SignalDefinition

    call_command("migrate", verbosity=0)
    call_command("seed_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    signal = SignalDefinition.objects.get(cell__tag="P-02", key="vibration_mm_s")
    SignalDefinition.objects.filter(pk=signal.pk).update(on_delay_seconds=0)  # time the pipeline, not the hold-off

    hostname = f"bench-breach-{os.getpid()}@localhost"
    worker = start_worker(dict(os.environ), hostname, Path(var_dir) / "worker.log")
    runs: list[dict[str, float]] = []
    try:
        wait_for_worker(app, hostname, worker)
        others = other_workers(app, hostname)
        back_to_normal(signal.pk)
        for index in range(args.warmup + args.runs):
            run = one_run(signal.pk, args.timeout)
            if index >= args.warmup:
                runs.append(run)
            back_to_normal(signal.pk)
            time.sleep(0.2)  # let the worker go idle: runs are sequential, not overlapping
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            worker.kill()
        from django.db import connections

        connections.close_all()
        if not args.keep_db:
            drop_database(bench_url, bench_name)

    totals = [r["open_ms"] for r in runs]
    report = {
        "bench": "breach_to_order",
        "runs": len(runs),
        "warmup": args.warmup,
        "p50_ms": round(statistics.median(totals), 1),
        "p90_ms": percentile(totals, 0.9),
        "min_ms": round(min(totals), 1),
        "max_ms": round(max(totals), 1),
        "goal_ms": GOAL_MS,
        "meets_goal": statistics.median(totals) <= GOAL_MS,
        "stages_p50_ms": {
            stage: round(statistics.median(r[f"{stage}_ms"] for r in runs), 1)
            for stage in ("ingest", "detected", "analyzed", "open")
        },
        "setup": {
            "database": "postgresql",
            "broker": "redis",
            "worker": "celery -P threads -c 4 (subprocess)",
            "engine": "fake",
            "other_workers_on_broker": others,
        },
        "open_ms": totals,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
