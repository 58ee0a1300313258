"""The faults `bench/faults.py` injects, one method each: `fault_<name>()` returns (the work it
created, when the fault ended on the monotonic clock, details for the report).

A mixin of `faults.Bench`, which supplies the harness: `args`, `top` (the topology), `worker`,
`api`, `new_work()`, `breach()`, `post_samples()` and `runs_running_since()`.
"""

from __future__ import annotations

import signal
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from fault_ledger import BeatSpy, Work, work_state
from topology import wait_for

NORMAL, BREACH = 2.0, 7.5  # mm/s; the bench cells' vibration alerts at 4.5 and trips at 7.1


class FaultCases:
    def fault_baseline(self) -> tuple[Work, float, dict]:
        work = self.new_work("baseline", self.args.n)
        self.breach(work)
        return work, time.monotonic(), {}

    def kill_when_in_flight(
        self,
        work: Work,
        since: datetime,
        active: Callable[[], bool] | None = None,
        second_run: float = 1.0,
        timeout: float = 30.0,
    ) -> dict | None:
        """kill -9 the worker once `active()` (default: an agent run on the work is running) holds,
        giving a second run up to `second_run` s to join; then restart it. None if nothing came
        in flight within `timeout` s. Returns the items' states just after the kill."""
        active = active or (lambda: self.runs_running_since(work, since) > 0)
        if not wait_for(active, timeout, 0.01):
            return None
        if second_run:
            wait_for(lambda: self.runs_running_since(work, since) >= 2, second_run, 0.02)
        self.worker.kill()
        state = work_state(work)
        time.sleep(1)
        self.restart_worker()
        return {
            "agent_runs": state["agent_runs"]["by_status"],
            "work_orders": state["work_orders"]["by_status"],
            **(
                {"plans": state["plans"]["by_status"], "plan_steps": state["plans"]["steps_by_status"]}
                if work.plans
                else {}
            ),
        }

    def fault_kill(self) -> tuple[Work, float, dict]:
        work = self.new_work("kill", self.args.n)
        self.breach(work)
        at_kill = []
        for _ in range(self.args.kills):
            since = datetime.now(UTC) if at_kill else work.since
            killed = self.kill_when_in_flight(work, since)
            if killed is None:
                break  # nothing left in flight to kill
            at_kill.append(killed)
        return work, time.monotonic(), {"kills": len(at_kill), "in_flight_at_each_kill": at_kill}

    def fault_pause(self) -> tuple[Work, float, dict]:
        work = self.new_work("pause", self.args.n)
        self.breach(work)
        in_flight = wait_for(lambda: self.runs_running_since(work, work.since), 30, 0.02)
        self.worker.signal_group(signal.SIGSTOP)
        time.sleep(self.args.pause_seconds)
        self.worker.signal_group(signal.SIGCONT)
        return work, time.monotonic(), {"paused_s": self.args.pause_seconds, "agent_runs_in_flight": in_flight}

    def fault_outage(self) -> tuple[Work, float, dict]:
        work = self.new_work("outage", self.args.n)
        now = datetime.now(UTC)
        batches = {str(uuid.uuid4()): [(s, now, BREACH)] for s in work.cells.values()}
        pending, accepted, statuses, slowest = dict(batches), {}, {}, 0.0

        def send(key: str, phase: str) -> Any:
            nonlocal slowest
            status, seconds, body = self.post_samples(batches[key], key=key)
            statuses[f"{phase}:{status}"] = statuses.get(f"{phase}:{status}", 0) + 1
            slowest = max(slowest, seconds)
            return status, body

        self.top.proxy.close()
        outage_ends = time.monotonic() + self.args.outage_seconds
        time.sleep(1)
        ready = self.api.get("/readyz")  # proof the fault is in effect: the web tier sees no broker
        readiness = {
            "status": ready.status_code,
            "checks": {k: v.get("status") for k, v in ready.json().get("checks", {}).items()},
        }
        ended = None
        deadline = outage_ends + 30
        while pending and time.monotonic() < deadline:
            for key in list(pending):
                phase = "outage" if ended is None else "after"
                status, body = send(key, phase)
                if status == 200:
                    accepted[key] = body
                    del pending[key]
                    resent, resent_body = send(key, phase + "_resend")  # the first answer was lost
                    if resent != 200 or resent_body != body:
                        statuses["resend_answer_differs"] = statuses.get("resend_answer_differs", 0) + 1
            if ended is None and time.monotonic() >= outage_ends:
                self.top.proxy.open()
                ended = time.monotonic()
            time.sleep(2)
        if ended is None:
            time.sleep(max(0.0, outage_ends - time.monotonic()))
            self.top.proxy.open()
            ended = time.monotonic()
        return (
            work,
            ended,
            {
                "outage_s": self.args.outage_seconds,
                "web_readyz_during_outage": readiness,
                "http": dict(sorted(statuses.items())),
                "slowest_request_s": round(slowest, 2),
                "batches_never_accepted": len(pending),
            },
        )

    def fault_beats(self) -> tuple[Work, float, dict]:
        from django.conf import settings

        schedule = {entry["task"]: float(entry["schedule"]) for entry in settings.CELERY_BEAT_SCHEDULE.values()}
        work = self.new_work("beats", self.args.n)
        spy = BeatSpy(self.top.redis_url, self.args.redis_db, set(schedule)).start()
        second = self.top.beat("beat-2")
        started = time.monotonic()
        time.sleep(2)
        self.breach(work)
        time.sleep(max(0.0, self.args.beats_seconds - 2))
        second.stop()
        ended = time.monotonic()
        spy.stop()
        window = ended - started
        counts = spy.counts(started, ended)
        per_entry, extra = {}, 0
        for task, interval in sorted(schedule.items()):
            allowed = int(window // interval) + 1  # one beat publishes at most this many
            per_entry[task] = {"interval_s": interval, "published": counts.get(task, 0), "one_beat_max": allowed}
            extra += max(0, counts.get(task, 0) - allowed)
        return work, ended, {"window_s": round(window, 1), "beat_entries": per_entry, "extra_publishes": extra}

    def fault_plans(self) -> tuple[Work, float, dict]:
        from workorders.models import WorkOrder

        work = self.new_work("plans", self.args.plans)
        self.worker.stop()  # the orders stay `detected` until the plans and their investigations run
        self.breach(work)
        orders = wait_for(
            lambda: (
                list(WorkOrder.objects.filter(cell_id__in=work.cells).values_list("pk", flat=True))
                if WorkOrder.objects.filter(cell_id__in=work.cells).count() >= len(work.cells)
                else None
            ),
            30,
        )
        for order in orders or []:
            plan = self.api_json("post", "/api/v1/aria/plans", {
                "goal": f"Investigate work order {order}", "autonomy": "auto",
                "context_refs": [{"type": "work_order", "id": order}],
            })  # fmt: skip
            self.api_json("post", f"/api/v1/aria/plans/{plan['id']}/approve")
            self.api_json("post", f"/api/v1/aria/plans/{plan['id']}/execute")
            work.plans.append(plan["id"])
        self.restart_worker()
        # Best: a step running or waiting on its investigation; else any plan still executing.
        killed = self.kill_when_in_flight(
            work, work.since, lambda: self._plans_executing(work, steps=True), second_run=0, timeout=10
        ) or self.kill_when_in_flight(work, work.since, lambda: self._plans_executing(work), second_run=0)
        return work, time.monotonic(), {"killed": killed is not None, "in_flight_at_kill": killed}

    def _plans_executing(self, work: Work, steps: bool = False) -> bool:
        """A plan `running` (executed, not finished); with `steps`, one of its steps is `running` or
        `waiting_job` (its investigation)."""
        from orchestrator.models import Plan, PlanStep

        if steps:
            active = ("running", "waiting_job")
            return PlanStep.objects.filter(plan_id__in=work.plans, status__in=active).exists()
        return Plan.objects.filter(pk__in=work.plans, status="running").exists()

    def api_json(self, method: str, path: str, body: dict | None = None) -> dict:
        response = self.api.request(method, path, json=body)
        if response.status_code >= 300:
            raise RuntimeError(f"{method.upper()} {path}: {response.status_code} {response.text[:300]}")
        return response.json()
