"""A plan step holds the work lease `plan_step:<id>` while its handler runs (heartbeated). A step
whose worker died (dead pid on this host, or a lease nobody renewed on another host) is re-driven
by the sweeper at once and taken over with its attempt's key; a slow step whose holder is alive
and renewing is never taken over before the outer bound (ARIA_PLAN_STEP_LEASE_SECONDS)."""

import threading
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone
from pydantic import BaseModel

from core.access import OPERATOR
from core.audit import audit_record
from core.capabilities import CapabilityContext, Tier, capability
from core.leases import HOST
from core.models import DispatchIntent, Event, WorkLease
from core.sweep import sweep
from orchestrator.choices import PlanStatus, StepStatus
from orchestrator.models import Plan, PlanStep
from orchestrator.services.executor import _claim, plan_execute, step_lease_key
from orchestrator.services.jobs import plans_poll_due
from orchestrator.services.plans import plan_transition
from tests.conftest import wait_until
from tests.orchestrator import testcaps
from tests.orchestrator.conftest import build_plan
from tests.reliability.conftest import dead_pid

pytestmark = pytest.mark.django_db
OTHER_HOST = "replacement-host-7:4242"


class SlowIn(BaseModel):
    label: str


SLOW = {"started": threading.Event(), "finish": threading.Event(), "calls": 0}


@capability("ltest.held_effect", description="A slow mutation.", input=SlowIn, tier=Tier.MUTATE, scopes=(OPERATOR,))
def lt_held_effect(ctx: CapabilityContext, params: SlowIn) -> dict[str, Any]:
    """Runs until the test lets it finish; applies its effect once per idempotency key."""
    SLOW["calls"] += 1
    SLOW["started"].set()
    SLOW["finish"].wait(timeout=60)
    record = audit_record(
        actor=ctx.user, action="otest.effect", target_type="otest", target_id=ctx.extra["idempotency_key"],
        details={"label": params.label},
    )  # fmt: skip
    return {"effect_id": record.pk}


@pytest.fixture(autouse=True)
def _reset_calls():
    testcaps.CALLS.clear()


@pytest.fixture
def owner(make_user):
    return make_user("oscar", OPERATOR)


def effect(label: str, depends_on: list[int] | None = None) -> dict:
    return {"capability": "otest.write_effect", "inputs": {"label": label}, "depends_on": depends_on or []}


def three_step_plan(owner) -> Plan:
    """Like the bench's plans: step 2 and 3 wait on step 1."""
    plan = build_plan(
        owner,
        [
            effect("first"),
            {"capability": "otest.read_value", "inputs": {"key": "b"}, "depends_on": [1]},
            effect("third", [2]),
        ],
    )
    plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=owner)
    return plan


def claimed_by_a_worker(plan: Plan) -> PlanStep:
    """Step 1 claimed by a worker (the claim commits with its lease), whose handler has not finished."""
    step = plan.steps.get(order=1)
    assert _claim(plan, step)
    assert WorkLease.objects.filter(key=step_lease_key(step.pk)).exists()
    return step


def done_events(step: PlanStep) -> int:
    return Event.objects.filter(type="plan_updated", payload__step_id=step.pk, payload__step_status="done").count()


def holder_died_on_this_host(step: PlanStep) -> None:  # kill -9: the pid is gone, the lease unexpired
    WorkLease.objects.filter(key=step_lease_key(step.pk)).update(holder=f"{HOST}:{dead_pid()}")


def holder_died_on_another_host(step: PlanStep) -> None:  # no pid to check: its TTL ran out unrenewed
    WorkLease.objects.filter(key=step_lease_key(step.pk)).update(holder=OTHER_HOST, expires_at=timezone.now())


@pytest.mark.parametrize("death", [holder_died_on_this_host, holder_died_on_another_host])
def test_a_step_whose_worker_died_is_redriven_and_its_plan_completes_once(
    owner, death, django_capture_on_commit_callbacks
):
    plan = three_step_plan(owner)
    step = claimed_by_a_worker(plan)
    key = step.idempotency_key
    death(step)

    with django_capture_on_commit_callbacks(execute=True):
        touched = sweep()

    assert touched["orchestrator.steps_lost_holder"] == 1
    plan.refresh_from_db()
    step.refresh_from_db()
    assert plan.status == PlanStatus.COMPLETED
    assert step.idempotency_key == key and step.attempts == 1  # taken over, not a new attempt
    assert testcaps.CALLS == ["write_effect", "read_value", "write_effect"]  # each step ran once
    assert testcaps.effect_count("first") == 1 and testcaps.effect_count("third") == 1
    assert [done_events(s) for s in plan.steps.order_by("order")] == [1, 1, 1]
    assert not WorkLease.objects.filter(key__startswith="plan_step:").exists()  # released with outcomes
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep()["orchestrator.steps_lost_holder"] == 0


def test_a_step_whose_holder_on_another_host_renews_its_lease_is_not_taken_over(
    owner, django_capture_on_commit_callbacks
):
    plan = three_step_plan(owner)
    step = claimed_by_a_worker(plan)
    claimed_at = step.claimed_at
    # A live worker elsewhere, its lease just renewed by its heartbeat.
    WorkLease.objects.filter(key=step_lease_key(step.pk)).update(
        holder=OTHER_HOST, token="alive", expires_at=timezone.now() + timedelta(seconds=45)
    )
    intents = DispatchIntent.objects.count()

    with django_capture_on_commit_callbacks(execute=True):
        assert sweep()["orchestrator.steps_lost_holder"] == 0
        plan_execute(plan.pk)  # a duplicate execute message

    step.refresh_from_db()
    assert step.status == StepStatus.RUNNING and step.claimed_at == claimed_at
    assert testcaps.CALLS == [] and DispatchIntent.objects.count() == intents
    assert WorkLease.objects.get(key=step_lease_key(step.pk)).token == "alive"


def test_past_the_outer_bound_a_step_is_seized_even_from_a_renewing_holder(
    owner, settings, django_capture_on_commit_callbacks
):
    """ARIA_PLAN_STEP_LEASE_SECONDS stays the outer bound: a holder that renews but never finishes
    (hung in its handler) is taken over by the beat's poll, with the attempt's key."""
    plan = three_step_plan(owner)
    step = claimed_by_a_worker(plan)
    key = step.idempotency_key
    WorkLease.objects.filter(key=step_lease_key(step.pk)).update(
        holder=OTHER_HOST, token="hung", expires_at=timezone.now() + timedelta(seconds=45)
    )
    too_old = timezone.now() - timedelta(seconds=settings.ARIA_PLAN_STEP_LEASE_SECONDS + 1)
    PlanStep.objects.filter(pk=step.pk).update(claimed_at=too_old)

    with django_capture_on_commit_callbacks(execute=True):
        plans_poll_due()

    plan.refresh_from_db()
    step.refresh_from_db()
    assert plan.status == PlanStatus.COMPLETED and step.idempotency_key == key
    assert testcaps.effect_count("first") == 1


@pytest.mark.django_db(transaction=True)  # the executor and its heartbeat run in their own threads
def test_a_slow_step_that_renews_its_lease_is_never_taken_over(owner, settings):
    settings.ARIA_LEASE_TTL_SECONDS = 0.6
    SLOW["started"].clear(), SLOW["finish"].clear()
    SLOW["calls"] = 0
    plan = build_plan(owner, [{"capability": "ltest.held_effect", "inputs": {"label": "slow"}}])
    plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=owner)
    outcome: dict[str, Any] = {}

    def worker() -> None:
        try:
            outcome["status"] = plan_execute(plan.pk).status
        finally:
            connection.close()

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    try:
        assert SLOW["started"].wait(timeout=30)
        step = plan.steps.get()
        several_ttls_later = step.claimed_at + timedelta(seconds=5 * 0.6)

        def still_its_own_after_several_ttls() -> bool:
            assert sweep()["orchestrator.steps_lost_holder"] == 0  # the sweeper sees a live holder
            assert plan_execute(plan.pk).status == PlanStatus.RUNNING  # a duplicate message: no takeover
            assert SLOW["calls"] == 1
            return WorkLease.objects.get(key=step_lease_key(step.pk)).expires_at > several_ttls_later

        assert wait_until(still_its_own_after_several_ttls, timeout=30, interval=0.2)
    finally:
        SLOW["finish"].set()
        thread.join(timeout=30)
    assert outcome["status"] == PlanStatus.COMPLETED
    step.refresh_from_db()
    assert step.status == StepStatus.DONE and step.attempts == 1 and SLOW["calls"] == 1
    assert testcaps.effect_count("slow") == 1 and done_events(step) == 1
    assert not WorkLease.objects.filter(key=step_lease_key(step.pk)).exists()
