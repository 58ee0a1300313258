"""Read steps that are ready together run as one batch (orchestrator/services/read_batch.py):
one claim statement, one outcome statement, one event INSERT — each step still with its own
attempt key, transitions and plan_updated event; anything else runs step by step as before."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.models import Event, WorkLease
from orchestrator.choices import PlanStatus, StepStatus
from orchestrator.models import PlanStep
from orchestrator.services import executor
from orchestrator.services.executor import plan_execute
from orchestrator.services.plans import plan_transition
from tests.orchestrator import testcaps
from tests.orchestrator.conftest import build_plan, start

pytestmark = pytest.mark.django_db


class Killed(Exception):
    pass


def read(n):
    return {"capability": "otest.read_value", "inputs": {"key": f"k{n}", "n": n}}


def step_updates(plan):
    events = Event.objects.filter(type="plan_updated", payload__plan_id=plan.pk).exclude(payload__step_id=None)
    return [(e.payload["step_id"], e.payload["step_status"]) for e in events.order_by("id")]


@pytest.mark.usefixtures("steady_registry")
def test_ready_reads_run_as_one_batch_each_with_its_own_key_result_and_event(owner):
    plan = build_plan(owner, [read(1), read(2), read(3), {**read(4), "depends_on": [1, 2, 3]}])
    plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=owner)
    with CaptureQueriesContext(connection) as ctx:
        plan = plan_execute(plan.pk)
    assert plan.status == PlanStatus.COMPLETED and testcaps.CALLS == ["read_value"] * 4
    steps = list(plan.steps.all())
    assert [s.result for s in steps] == [{"key": f"k{n}", "value": n} for n in (1, 2, 3, 4)]
    assert all(s.status == "done" and s.attempts == 1 for s in steps)
    keys = [s.idempotency_key for s in steps]
    assert len(set(keys)) == 4 and all(
        k.startswith(f"plan{plan.pk}-step{s.pk}-") for k, s in zip(keys, steps, strict=True)
    )
    # steps 1–3 share a batch (one claim, one outcome write); step 4 depended on them, so it came after
    assert len({k.rsplit("-", 1)[1] for k in keys[:3]}) == 1 and keys[3].rsplit("-", 1)[1] != keys[0].rsplit("-", 1)[1]
    claims = [q for q in ctx.captured_queries if """SET "status" = 'running'""" in q["sql"]]
    assert len(claims) == 2  # the batch of three, then step 4
    assert step_updates(plan) == [(s.pk, "done") for s in steps]


@pytest.mark.usefixtures("steady_registry")
def test_a_batch_costs_the_same_statements_for_5_reads_as_for_25(owner):
    """Leases are taken and released for the whole batch at once (core.leases.leases_seize /
    leases_release): before, each step cost its own savepoint, lease INSERT and DELETE."""

    def run(n):
        plan = build_plan(owner, [read(i) for i in range(1, n + 1)])
        plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=owner)
        with CaptureQueriesContext(connection) as ctx:
            assert plan_execute(plan.pk).status == PlanStatus.COMPLETED
        leases = [q for q in ctx.captured_queries if "core_worklease" in q["sql"]]
        return len(ctx.captured_queries), len(leases)

    assert run(5) == run(25)
    assert not WorkLease.objects.exists()  # every lease released with the outcomes


def test_an_error_in_a_batch_fails_that_step_and_the_plan_the_rest_are_done(owner):
    bad = {"capability": "otest.read_value", "inputs": {"key": "k", "n": "not a number"}}
    plan = start(build_plan(owner, [read(1), bad, read(3)]))
    assert plan.status == PlanStatus.FAILED
    one, two, three = plan.steps.all()
    assert (one.status, two.status, three.status) == ("done", "failed", "done")
    assert "n:" in two.error and "Step 2" in plan.error


def test_steps_that_ask_gate_or_write_are_not_batched(owner, django_capture_on_commit_callbacks):
    scored = {"capability": "otest.score", "inputs": {"score": 0.9}, "quality_gate": {"field": "quality.score", "op": "gte", "threshold": 0.5}}  # fmt: skip
    plan = start(build_plan(owner, [read(1), scored, {"capability": "otest.note", "inputs": {"label": "x"}}]))
    assert plan.status == PlanStatus.COMPLETED
    suffixes = {s.idempotency_key.rsplit("-", 1)[1] for s in plan.steps.all()}
    assert len(suffixes) == 3  # read, quality-gated step and safe step: each claimed on its own
    # under ask_all even reads ask first, one at a time
    asking = start(build_plan(owner, [read(1), read(2)], autonomy="ask_all"))
    assert asking.status == PlanStatus.PAUSED and asking.interactions.count() == 1


def test_a_step_another_worker_took_is_left_out_of_the_batch(owner):
    plan = build_plan(owner, [read(1), read(2), read(3)])
    plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=owner)
    taken = plan.steps.get(order=2)
    assert executor._claim(plan, taken)  # another worker holds step 2 (its handler still running)
    plan = plan_execute(plan.pk)
    assert plan.status == PlanStatus.RUNNING and testcaps.CALLS == ["read_value"] * 2
    assert [s.status for s in plan.steps.all()] == ["done", "running", "done"]


def test_a_worker_killed_mid_batch_leaves_reads_that_the_lease_pass_reruns(owner, monkeypatch):
    plan = build_plan(owner, [read(1), read(2)])

    def die(*args, **kwargs):
        raise Killed

    monkeypatch.setattr(executor, "record_batch", die)
    with pytest.raises(Killed):
        start(plan)
    assert [s.status for s in plan.steps.all()] == ["running", "running"] and testcaps.CALLS == ["read_value"] * 2
    monkeypatch.undo()
    assert plan_execute(plan.pk).status == PlanStatus.RUNNING  # within the lease: left alone
    plan = plan_execute(plan.pk, stale_after=timedelta(0))
    assert plan.status == PlanStatus.COMPLETED and testcaps.CALLS == ["read_value"] * 4  # re-read: harmless
    assert [(s.status, s.attempts) for s in PlanStep.objects.filter(plan=plan)] == [("done", 1), ("done", 1)]


def test_a_batch_stops_when_the_plan_is_cancelled_meanwhile(owner, monkeypatch):
    plan = build_plan(owner, [read(1), read(2), {**read(3), "depends_on": [1, 2]}])
    original = executor._dispatch

    def dispatch_and_cancel(p, step):
        result = original(p, step)
        if step.order == 1:  # a person cancels while the batch's first read runs
            plan_transition(plan=type(p).objects.get(pk=p.pk), to_status=PlanStatus.CANCELLED, actor=None)
        return result

    monkeypatch.setattr(executor, "_dispatch", dispatch_and_cancel)
    plan = start(plan)
    assert plan.status == PlanStatus.CANCELLED
    # the batch's reads were already claimed and finish; nothing after them is claimed
    assert [s.status for s in plan.steps.all()] == [StepStatus.DONE, StepStatus.DONE, StepStatus.PENDING]
    assert testcaps.CALLS == ["read_value"] * 2
