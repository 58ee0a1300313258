"""With PostgreSQL + Redis: a real Celery worker runs the plan; a killed worker leaves no double effect.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/h7 REDIS_URL=redis://127.0.0.1:6379/7 \
     .venv/bin/python -m pytest tests/orchestrator -m integration
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from django.db import connection, transaction

from core.access import APPROVER, OPERATOR
from core.errors import Forbidden
from orchestrator.choices import PlanStatus, StepStatus
from orchestrator.models import Interaction, Plan
from orchestrator.services import executor, interactions, jobs
from orchestrator.services.interactions import interaction_answer
from orchestrator.services.plans import plan_transition
from tests.orchestrator import testcaps
from tests.orchestrator.conftest import build_plan
from tests.orchestrator.test_flow import flow_steps
from tests.workorders import factories as f

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]


def worker_session() -> str:
    from django.conf import settings

    return f"{settings.ARIA_TEST_SESSION}-orch"


def worker_queue() -> str:
    return f"aria-test-{worker_session()}"  # settings_test's default queue for that session


def start_worker(lease: float = 300.0) -> subprocess.Popen:
    """Our own worker (with the otest.* capabilities) on its own queue, so it can be killed."""
    from tests.conftest import _database_url_for

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "aria_project.settings_test",
        "DATABASE_URL": _database_url_for(connection.settings_dict["NAME"]),
        "ARIA_TEST_WORKER": "1",
        "ARIA_TEST_SESSION": worker_session(),
        "ARIA_PLAN_STEP_LEASE_SECONDS": str(lease),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "tests.orchestrator.worker_app", "worker", "-P", "solo",
         "-Q", worker_queue(), "-n", f"orch-{os.getpid()}-{time.monotonic_ns()}@localhost", "--loglevel=WARNING",
         "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=ROOT, env=env, start_new_session=True,
    )  # fmt: skip
    return process


def send(app, name: str, *args) -> None:
    app.send_task(name, args=list(args), queue=worker_queue())


def stop(worker: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if worker.poll() is None:
        os.kill(worker.pid, sig)
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.kill(worker.pid, signal.SIGKILL)
            worker.wait()


def wait_for(condition: Callable[[], bool], timeout: float = 60.0, poke: Callable[[], None] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        if poke:
            poke()
        time.sleep(0.5)
    raise AssertionError("timed out")


@pytest.fixture
def celery_app():
    from tests.orchestrator.worker_app import app

    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge(worker_queue())
    return app


@pytest.fixture
def via_worker(monkeypatch, celery_app):
    """The executor's enqueue goes to the broker (send_task is never eager), not in-process."""

    def enqueue(plan_id: int) -> None:
        transaction.on_commit(lambda: send(celery_app, "orchestrator.execute_plan", plan_id))

    for module in (executor, interactions, jobs):  # each binds orchestrator.dispatch's at import
        monkeypatch.setattr(module, "enqueue_execution", enqueue)
    return celery_app


def plan_status(plan_id: int) -> str:
    return Plan.objects.get(pk=plan_id).status


def test_gated_plan_runs_parks_on_investigation_and_completes_on_a_worker(make_user, via_worker):
    owner, approver = make_user("owen", OPERATOR), make_user("ava", APPROVER)
    cell = f.make_cell("P-02")
    vibration = f.make_signal(cell)
    f.ramp(vibration)
    f.make_kb(cell)
    f.make_history(cell)
    wo = f.make_work_order(cell, triggered_by_alarm=f.make_alarm(vibration, value=5.0), status="detected")
    plan = build_plan(owner, flow_steps(wo.pk), autonomy="auto")
    worker = start_worker()
    try:
        plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=owner)
        send(via_worker, "orchestrator.execute_plan", plan.pk)
        wait_for(lambda: plan_status(plan.pk) == PlanStatus.PAUSED)
        ask = Interaction.objects.get(plan=plan, status="open")
        with pytest.raises(Forbidden):
            interaction_answer(interaction=ask, actor=owner, decision="approve")
        interaction_answer(interaction=ask, actor=approver, decision="approve")
        # the worker runs the release, parks on the investigation, which the worker also runs;
        # the beat job (sent by hand here) polls it and resumes the plan
        wait_for(
            lambda: plan_status(plan.pk) == PlanStatus.COMPLETED,
            timeout=90,
            poke=lambda: send(via_worker, "orchestrator.poll_jobs"),
        )
    finally:
        stop(worker)
    steps = list(Plan.objects.get(pk=plan.pk).steps.all())
    assert [s.status for s in steps] == ["done"] * 4
    assert steps[2].job_kind == "investigation" and steps[2].result["confidence"] > 0
    wo.refresh_from_db()
    assert wo.status in ("analyzed", "open")


def test_worker_killed_after_the_side_effect_resumes_without_repeating_it(owner, via_worker):
    plan = build_plan(
        owner,
        [
            {"capability": "otest.slow_effect", "inputs": {"label": "kill-1", "seconds": 4}},
            {"capability": "otest.read_value", "inputs": {"key": "after"}, "depends_on": [1]},
        ],
    )
    first = start_worker()
    try:
        plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=owner)
        send(via_worker, "orchestrator.execute_plan", plan.pk)
        wait_for(lambda: testcaps.effect_count("kill-1") == 1)
    finally:
        stop(first, signal.SIGKILL)  # dies between the committed effect and the step's `done`
    step = plan.steps.get(order=1)
    assert step.status == StepStatus.RUNNING
    second = start_worker(lease=1.0)
    try:
        time.sleep(1.5)
        wait_for(
            lambda: plan_status(plan.pk) == PlanStatus.COMPLETED,
            timeout=60,
            poke=lambda: send(via_worker, "orchestrator.poll_jobs"),
        )
    finally:
        stop(second)
    step.refresh_from_db()
    assert step.status == StepStatus.DONE and step.attempts == 1
    assert testcaps.effect_count("kill-1") == 1
