"""What bench/faults.py counts, read from the database through the Django ORM (after django.setup()).

A fault's work is one alarm episode per cell: the bench gives every fault its own cells, each
with one signal, and breaches each signal once. So, per fault:
- a work item is a cell's work order (it should reach `open`, the generated repair order), the
  agent runs on those orders (none may stay `running`), and the plans the fault executed (they
  should finish, or wait on a human with an open interaction);
- anything more than one work order, alarm, RCA (failure-history row), `analyzed`/`open`
  transition, `anomaly_detected`/`rca_ready`/`work_order_ready` event per order, stored copy of a
  (signal, time) sample, or `done` event per plan step is a duplicate.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

ORDER_FINISHED = ("open", "in_progress", "completed", "cancelled")
PLAN_FINISHED = ("completed", "failed", "cancelled")
RUN_ACTIVE = "running"


@dataclass
class Work:
    """The items one fault started: cell id → its breached signal id; plans it executed."""

    fault: str
    cells: dict[int, int]
    since: datetime
    plans: list[int] = field(default_factory=list)


def _orders(work: Work) -> list[dict[str, Any]]:
    from workorders.models import WorkOrder

    return list(
        WorkOrder.objects.filter(cell_id__in=work.cells, created_at__gte=work.since).values(
            "pk", "cell_id", "status", "triggered_by_alarm_id"
        )
    )


def _runs(order_ids: list[int], since: datetime) -> list[dict[str, Any]]:
    from core.models import AgentRun

    return list(
        AgentRun.objects.filter(
            subject_type="work_order", subject_id__in=[str(pk) for pk in order_ids], started_at__gte=since
        ).values("pk", "agent", "status", "finish_reason", "started_at")
    )


def _plans(work: Work) -> list[dict[str, Any]]:
    from orchestrator.models import Interaction, Plan, PlanStep

    plans = list(Plan.objects.filter(pk__in=work.plans).values("pk", "status", "error"))
    steps = Counter(PlanStep.objects.filter(plan_id__in=work.plans).values_list("status", flat=True))
    asking = set(Interaction.objects.filter(plan_id__in=work.plans, status="open").values_list("plan_id", flat=True))
    for plan in plans:
        plan["waiting_on_human"] = plan["status"] == "paused" and plan["pk"] in asking
    return [{"steps": dict(steps)}, *plans]


def work_state(work: Work) -> dict[str, Any]:
    """Every item's state now; `settled` once nothing is left for the system to do."""
    orders = _orders(work)
    runs = _runs([o["pk"] for o in orders], work.since)
    step_counts, *plans = _plans(work) if work.plans else [{"steps": {}}]
    cells_with_order = {o["cell_id"] for o in orders}
    missing = len(set(work.cells) - cells_with_order)  # a breach whose order was never created
    orders_finished = sum(o["status"] in ORDER_FINISHED for o in orders)
    orders_stranded = len(orders) - orders_finished + missing
    runs_stranded = sum(r["status"] == RUN_ACTIVE for r in runs)
    plans_finished = sum(p["status"] in PLAN_FINISHED or p["waiting_on_human"] for p in plans)
    plans_stranded = len(plans) - plans_finished
    return {
        "work_orders": {
            "started": len(work.cells),
            "finished": orders_finished,
            "stranded": orders_stranded,
            "never_created": missing,
            "by_status": dict(Counter(o["status"] for o in orders)),
        },
        "agent_runs": {
            "started": len(runs),
            "finished": len(runs) - runs_stranded,
            "stranded": runs_stranded,
            "by_status": dict(Counter(r["status"] for r in runs)),
        },
        "plans": {
            "started": len(plans),
            "finished": plans_finished,
            "stranded": plans_stranded,
            "by_status": dict(Counter(p["status"] for p in plans)),
            "steps_by_status": step_counts["steps"],
            "errors": sorted({p["error"][:160] for p in plans if p["error"]}),
        },
        "settled": orders_stranded == 0 and runs_stranded == 0 and plans_stranded == 0,
    }


def _excess(counts: Counter) -> int:
    return sum(n - 1 for n in counts.values() if n > 1)


def duplicates(work: Work) -> dict[str, int]:
    from django.db.models import Count

    from core.models import Event
    from orchestrator.models import PlanStep
    from sentinel.models import Alarm, SignalSample
    from workorders.models import FailureHistory, WorkOrderEvent

    orders = _orders(work)
    order_ids = {o["pk"] for o in orders}
    signals = list(work.cells.values())
    transitions = Counter(
        WorkOrderEvent.objects.filter(work_order_id__in=order_ids).values_list("work_order_id", "to_status")
    )
    events = Event.objects.filter(
        created_at__gte=work.since, type__in=("anomaly_detected", "rca_ready", "work_order_ready")
    ).values_list("type", "payload")
    by_event: Counter = Counter()
    for kind, payload in events:
        if payload.get("work_order_id") in order_ids:
            by_event[(kind, payload["work_order_id"], payload.get("signal_def_id"))] += 1
    step_ids = set(PlanStep.objects.filter(plan_id__in=work.plans).values_list("pk", flat=True))
    step_done: Counter = Counter()
    for (payload,) in Event.objects.filter(created_at__gte=work.since, type="plan_updated").values_list("payload"):
        if payload.get("step_id") in step_ids and payload.get("step_status") == "done":
            step_done[(payload["step_id"], payload.get("owner_id"))] += 1  # one copy per recipient
    sample_rows = (
        SignalSample.objects.filter(signal_id__in=signals)
        .values("signal_id", "time")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
    )
    return {
        "work_orders_per_episode": _excess(Counter(o["cell_id"] for o in orders)),
        "alarms_per_episode": _excess(
            Counter(Alarm.objects.filter(signal_id__in=signals, raised_at__gte=work.since).values_list("signal_id"))
        ),
        "rca_rows_per_order": _excess(
            Counter(FailureHistory.objects.filter(work_order_id__in=order_ids).values_list("work_order_id"))
        ),
        "analyzed_transitions_per_order": _excess(
            Counter({k: n for k, n in transitions.items() if k[1] == "analyzed"})
        ),
        "open_transitions_per_order": _excess(Counter({k: n for k, n in transitions.items() if k[1] == "open"})),
        "events_per_order": _excess(by_event),
        "samples_per_signal_time": sum(row["n"] - 1 for row in sample_rows),
        "done_events_per_plan_step": _excess(step_done),
    }


_TASK = re.compile(r'task\\?"\s*:\s*\\?"([\w.]+)')


class BeatSpy:
    """Counts the beat entries published to the broker (LPUSH on the bench's Redis db) while it
    runs, through Redis MONITOR: what reached the queue, whichever beat sent it."""

    def __init__(self, redis_url: str, db: int, task_names: set[str]) -> None:
        self.redis_url, self.db, self.task_names = redis_url, db, task_names
        self.published: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="beat-spy", daemon=True)

    def start(self) -> BeatSpy:
        self._thread.start()
        return self

    def _run(self) -> None:
        import redis

        client = redis.Redis.from_url(self.redis_url)
        with client.monitor() as monitor:
            for command in monitor.listen():  # the worker's BRPOP polls keep this moving
                if self._stop.is_set():
                    break
                text = command.get("command", "")
                if command.get("db") != self.db or not text.upper().startswith("LPUSH"):
                    continue
                match = _TASK.search(text)
                if match and match.group(1) in self.task_names:
                    self.published.append((time.monotonic(), match.group(1)))
        client.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=15)

    def counts(self, start: float, end: float) -> Counter:
        return Counter(name for at, name in self.published if start <= at <= end)
