#!/usr/bin/env python
"""Reliability under faults: the production topology on PostgreSQL + Redis, one fault at a time.

    .venv/bin/python bench/faults.py [--short] [--report-only] [--faults kill,pause,…] [--keep-db]

Starts its own topology (database `aria_faults` on DATABASE_URL's server, Redis db 9 on
REDIS_URL's server; both emptied first): `manage.py migrate`, `seed_demo`, then uvicorn (web),
`celery worker -l info` and `celery beat -l info` as separate processes with ARIA_ENGINE=fake.
The web process reaches Redis through a TCP proxy this script controls. Work is created the way a
client would: breaching samples through POST /api/v1/signals/samples (bearer token from
`manage.py create_api_token`), plans through /api/v1/aria/plans. Each fault gets fresh cells (one
signal each, so one alarm episode per cell) and is measured on its own:

- baseline    the same breaches with no fault (the same-run reference for recovery times)
- kill        kill -9 of the whole worker (main + pool) while investigations run, ×--kills, restarts
- pause       SIGSTOP of the worker while investigations run, SIGCONT after --pause-seconds
- outage      Redis unreachable for the web tier only for --outage-seconds; a gateway sends the
              breaches meanwhile with an Idempotency-Key, retries 5xx/connection errors with the
              same key, and re-sends every accepted batch once (an ack lost on the way back)
- beats       a second `celery beat` for --beats-seconds, with breaches meanwhile; the beat
              entries reaching the broker are counted (Redis MONITOR)
- plans       plans "Investigate work order N" (autonomy auto) executed, worker killed -9 while
              their steps run or wait on the investigation job, then restarted

Per fault it prints started / finished / stranded / duplicated items and the time to recover
(from the end of the fault until every item is settled), beside the goal: 0 stranded, 0 duplicated,
recovery ≤ 120 s. Exit code 1 when a goal is missed (unless --report-only), 2 on a setup error.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import signal
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fault_cases import BREACH, NORMAL, FaultCases
from fault_ledger import Work, duplicates, work_state
from topology import Proc, Topology, database_drop, database_recreate, redis_flush, wait_for, with_path

GOAL = {"stranded": 0, "duplicated": 0, "recovery_s_max": 120.0}
FAULTS = ("baseline", "kill", "pause", "outage", "beats", "plans")
PROFILES = {
    "full": {"n": 9, "kills": 3, "plans": 4, "pause_seconds": 60, "outage_seconds": 60, "beats_seconds": 60,
             "wait": 180},
    "short": {"n": 3, "kills": 1, "plans": 3, "pause_seconds": 10, "outage_seconds": 10, "beats_seconds": 20,
              "wait": 60},
}  # fmt: skip
# --sweep short (the --short default): the sweeper's interval and deadlines (aria_project/settings.py)
# cut down, so a CI run measures recovery in seconds; --sweep default keeps the production values.
SHORT_SWEEP_ENV = {
    "ARIA_SWEEP_INTERVAL": "5",
    "ARIA_SWEEP_GRACE_SECONDS": "5",
    "ARIA_STRANDED_AFTER_SECONDS": "20",
    "ARIA_DISPATCH_RELAY_INTERVAL": "2",
    "ARIA_PLAN_POLL_INTERVAL": "5",
}


def log(message: str) -> None:
    print(f"[faults {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


class Bench(FaultCases):
    """The harness: the topology, fresh work, and the measurement of one fault (`fault_cases`)."""

    def __init__(self, topology: Topology, args: argparse.Namespace) -> None:
        import httpx

        self.top, self.args = topology, args
        self.api: httpx.Client | None = None
        self.worker: Proc | None = None
        self.beat: Proc | None = None
        self._cells = 0

    # --- topology -------------------------------------------------------------------------------

    def start(self) -> None:
        import httpx

        log(f"migrate + seed_demo in {self.top.database_url}")
        self.top.manage("migrate", "--noinput")
        self.top.manage("seed_demo")
        token = self.top.manage("create_api_token", "operator", "--name", "faults").strip().splitlines()[-1]
        self.top.web()
        self.worker = self.top.worker()
        self.beat = self.top.beat()
        self.top.wait_web()
        self.wait_worker()
        self.api = httpx.Client(base_url=self.top.base_url, headers={"Authorization": f"Bearer {token}"}, timeout=60)

    def wait_worker(self, timeout: float = 90.0) -> None:
        from aria_project.celery import app

        name = f"faults-{self.worker.name}@localhost"
        if not wait_for(lambda: self.worker.alive and app.control.ping(destination=[name], timeout=0.5), timeout):
            raise RuntimeError(f"the worker did not answer a ping in {timeout:.0f}s (see {self.worker.log})")

    def restart_worker(self) -> None:
        if not self.worker.alive:
            self.worker.start()
        self.wait_worker()

    # --- work -----------------------------------------------------------------------------------

    def new_work(self, fault: str, count: int) -> Work:
        """`count` fresh cells, each with one vibration signal that has a normal sample."""
        from sentinel.models import Cell, Line, SignalDefinition

        line = Line.objects.order_by("pk").first()
        cells: dict[int, int] = {}
        for _ in range(count):
            self._cells += 1
            tag = f"FB-{self._cells:03d}"
            cell = Cell.objects.create(
                line=line, tag=tag, name=f"Fault-bench pump {tag}", equipment_type="centrifugal_pump",
                onboarding_complete=True,
            )  # fmt: skip
            signal_def = SignalDefinition.objects.create(
                cell=cell, key="vibration_mm_s", display_name="Vibration (RMS)", unit="mm/s", alert=4.5, trip=7.1,
                deadband=0.2,
            )  # fmt: skip
            cells[cell.pk] = signal_def.pk
        earlier = datetime.now(UTC) - timedelta(seconds=5)
        status, _, body = self.post_samples([(s, earlier, NORMAL) for s in cells.values()])
        if status != 200:
            raise RuntimeError(f"priming samples were refused: {status} {body}")
        return Work(fault=fault, cells=cells, since=datetime.now(UTC))

    def post_samples(self, rows: list[tuple[int, datetime, float]], key: str | None = None) -> tuple[Any, float, Any]:
        """(status or the connection error's name, seconds, body)."""
        import httpx

        payload = {"samples": [{"signal_id": s, "time": t.isoformat(), "value": v} for s, t, v in rows]}
        headers = {"Idempotency-Key": key} if key else {}
        started = time.monotonic()
        try:
            response = self.api.post("/api/v1/signals/samples", json=payload, headers=headers)
        except httpx.HTTPError as exc:
            return type(exc).__name__, time.monotonic() - started, None
        try:
            body = response.json()
        except ValueError:
            body = response.text[:200]
        return response.status_code, time.monotonic() - started, body

    def breach(self, work: Work) -> None:
        now = datetime.now(UTC)
        status, _, body = self.post_samples([(s, now, BREACH) for s in work.cells.values()], key=str(uuid.uuid4()))
        if status != 200:
            raise RuntimeError(f"breaching samples were refused: {status} {body}")

    def runs_running_since(self, work: Work, since: datetime) -> int:
        from core.models import AgentRun
        from workorders.models import WorkOrder

        order_ids = WorkOrder.objects.filter(cell_id__in=work.cells).values_list("pk", flat=True)
        return AgentRun.objects.filter(
            subject_type="work_order", subject_id__in=[str(pk) for pk in order_ids], status="running",
            started_at__gte=since,
        ).count()  # fmt: skip

    # --- measure --------------------------------------------------------------------------------

    def measure(self, fault: str) -> dict[str, Any]:
        log(f"fault {fault}: start")
        started = time.monotonic()
        work, ended, details = getattr(self, f"fault_{fault}")()
        log(f"fault {fault}: fault over after {ended - started:.1f}s; waiting up to {self.args.wait}s to settle")
        settled_at = wait_for(lambda: work_state(work)["settled"] and time.monotonic(), self.args.wait, 0.25)
        state = work_state(work)
        dupes = duplicates(work)
        stranded = sum(state[kind]["stranded"] for kind in ("work_orders", "agent_runs", "plans"))
        duplicated = sum(dupes.values()) + details.get("extra_publishes", 0)
        recovery = round(max(0.0, settled_at - ended), 1) if settled_at else None
        met = stranded == 0 and duplicated == 0 and recovery is not None and recovery <= GOAL["recovery_s_max"]
        result = {
            "fault": fault,
            "started": sum(state[kind]["started"] for kind in ("work_orders", "agent_runs", "plans")),
            "finished": sum(state[kind]["finished"] for kind in ("work_orders", "agent_runs", "plans")),
            "stranded": stranded,
            "duplicated": duplicated,
            "recovery_s": recovery,
            "waited_s": self.args.wait if recovery is None else None,
            "goal": GOAL,
            "goal_met": met,
            "items": {kind: state[kind] for kind in ("work_orders", "agent_runs", "plans") if state[kind]["started"]},
            "duplicates": dupes,
            "fault_details": details,
        }
        log(f"fault {fault}: stranded {stranded}, duplicated {duplicated}, recovery {recovery}s, goal met: {met}")
        for proc in (self.worker, self.beat):  # the next fault starts from a running topology
            if not proc.alive:
                log(f"{proc.name} exited ({proc.popen.returncode}); restarting it")
                proc.start()
        self.wait_worker()
        return result


def interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--short", action="store_true", help="CI variant: N=3, 10 s pause/outage, 60 s wait.")
    parser.add_argument("--report-only", action="store_true", help="Exit 0 even when a goal is missed.")
    parser.add_argument("--faults", default=",".join(FAULTS), help=f"Comma-separated subset of {','.join(FAULTS)}.")
    parser.add_argument("--n", type=int, help="Alarm episodes (cells) per fault.")
    parser.add_argument("--kills", type=int, help="kill -9 rounds in the kill fault.")
    parser.add_argument("--plans", type=int, help="Plans in the plans fault.")
    parser.add_argument("--pause-seconds", type=float)
    parser.add_argument("--outage-seconds", type=float)
    parser.add_argument("--beats-seconds", type=float)
    parser.add_argument("--wait", type=float, help="Seconds to wait after a fault for every item to settle.")
    parser.add_argument(
        "--database", default="aria_faults", help="Database created (and dropped) on DATABASE_URL's server."
    )
    parser.add_argument(
        "--redis-db", type=int, default=9, help="Redis database number (emptied) on REDIS_URL's server."
    )
    parser.add_argument(
        "--sweep", choices=("short", "default"), help="Sweeper deadlines: cut down (short) or production."
    )
    parser.add_argument(
        "--worker-host",
        default="",
        help="Run each worker start under hostname NAME-<n> (unshare --uts, root): a dead worker's "
        "replacement runs on another machine, so its leases cannot be checked by pid.",
    )
    parser.add_argument("--keep-db", action="store_true", help="Keep the database and the process logs afterwards.")
    args = parser.parse_args()
    for key, value in PROFILES["short" if args.short else "full"].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.sweep = args.sweep or ("short" if args.short else "default")
    args.faults = [f.strip() for f in args.faults.split(",") if f.strip()]
    unknown = sorted(set(args.faults) - set(FAULTS))
    if unknown:
        parser.error(f"unknown faults: {', '.join(unknown)}")
    return args


def main() -> int:
    args = parse_args()
    database_url = with_path(os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/x", args.database)
    redis_url = with_path(os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0", str(args.redis_db))
    if not database_url.startswith("postgres"):
        print(json.dumps({"bench": "faults", "error": "DATABASE_URL must be postgres://… (or unset)"}))
        return 2
    var_dir = Path(tempfile.mkdtemp(prefix="aria-faults-"))
    sweep_env = SHORT_SWEEP_ENV if args.sweep == "short" else {}
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "ARIA_ENV": "development",
        "ARIA_ENGINE": "fake",
        "ARIA_VAR_DIR": str(var_dir),
        "DJANGO_SETTINGS_MODULE": "aria_project.settings",
        "DJANGO_DEBUG": "false",
        "ARIA_CELERY_EAGER": "false",
        **sweep_env,
    }
    env.pop("ARIA_EMBEDDED_WORKER", None)
    os.environ.update(env)
    database_recreate(database_url)
    redis_flush(redis_url)
    topology = Topology(
        database_url=database_url, redis_url=redis_url, env=env, var_dir=var_dir, worker_host=args.worker_host
    )
    signal.signal(signal.SIGTERM, interrupt)
    results: list[dict[str, Any]] = []
    error = None
    try:
        import django

        django.setup()
        logging.getLogger("httpx").setLevel(logging.WARNING)
        bench = Bench(topology, args)
        bench.start()
        for fault in args.faults:
            results.append(bench.measure(fault))
    except KeyboardInterrupt:
        error = "interrupted"
    except Exception as exc:  # report what was measured so far, then fail
        error = f"{type(exc).__name__}: {exc}"
        log(error)
    finally:
        topology.stop_all()
        from django.db import connections

        connections.close_all()
        if not args.keep_db:
            database_drop(database_url)
            redis_flush(redis_url)
    measured = [r for r in results if r["fault"] != "baseline"]
    report = {
        "bench": "faults",
        "mode": "short" if args.short else "full",
        "goal": GOAL,
        "goal_met": error is None and all(r["goal_met"] for r in results),
        "error": error,
        "baseline": next((r for r in results if r["fault"] == "baseline"), None),
        "faults": measured,
        "params": {k: getattr(args, k) for k in PROFILES["full"]},
        "sweep": args.sweep,
        "env_overrides": {"ARIA_ENGINE": "fake", **sweep_env},
        "topology": {
            "database": database_url,
            "redis": redis_url,
            "processes": {
                p.name: " ".join(Path(a).name if i == 0 else a for i, a in enumerate(p.cmd)) for p in topology.procs
            },
            "web_redis": "through a TCP proxy (the outage fault closes it)",
            "worker_host": args.worker_host or "this host",
            "logs": str(var_dir) if args.keep_db else None,
        },
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }
    print(json.dumps(report, indent=2, default=str))
    if error is not None:
        return 2
    return 0 if report["goal_met"] or args.report_only else 1


if __name__ == "__main__":
    sys.exit(main())
