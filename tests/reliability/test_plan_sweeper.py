"""Plans never wait forever: a lost execute message is re-dispatched by the sweeper (before, only
the 300 s step lease recovered it), a step parked on an investigation whose message was lost
finishes once the sweeper re-drives the investigation, and a job that never progresses fails its
step with a recorded reason."""

from datetime import timedelta

import pytest
from django.utils import timezone

from core.access import OPERATOR
from core.models import DispatchIntent
from core.sweep import sweep
from orchestrator.choices import PlanStatus, StepStatus
from orchestrator.models import Plan, PlanStep
from orchestrator.services.executor import plan_start
from orchestrator.services.jobs import plans_poll_due
from tests.orchestrator import testcaps  # noqa: F401  (registers the otest.* capabilities)
from tests.orchestrator.conftest import build_plan
from tests.reliability.test_sweeper import LONG_AGO, open_order_whose_investigation_was_lost
from workorders.models import WorkOrder

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(make_user):
    return make_user("oscar", OPERATOR)


def age(plan: Plan) -> None:
    old = timezone.now() - LONG_AGO
    Plan.objects.filter(pk=plan.pk).update(updated_at=old)
    PlanStep.objects.filter(plan=plan).update(updated_at=old)
    DispatchIntent.objects.update(sent_at=old, created_at=old)


def test_a_plan_whose_execute_message_was_lost_is_redispatched(owner, django_capture_on_commit_callbacks):
    plan = build_plan(owner, [{"capability": "otest.read_value", "inputs": {"key": "a"}}])
    with django_capture_on_commit_callbacks(execute=False):  # the execute message is lost
        plan_start(plan=plan, actor=owner)
    age(plan)
    with django_capture_on_commit_callbacks(execute=True):
        touched = sweep()
    assert touched["orchestrator.plans_lost_execution"] == 1
    plan.refresh_from_db()
    assert plan.status == PlanStatus.COMPLETED
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep()["orchestrator.plans_lost_execution"] == 0


def test_a_plan_waiting_on_a_human_or_a_job_is_not_lost(owner, django_capture_on_commit_callbacks):
    plan = build_plan(
        owner,
        [
            {"capability": "otest.start_job", "inputs": {"ref": "j1"}},
            {"capability": "otest.read_value", "inputs": {"key": "b"}, "depends_on": [1]},
        ],
    )
    with django_capture_on_commit_callbacks(execute=True):
        plan_start(plan=plan, actor=owner)
    assert plan.steps.get(order=1).status == StepStatus.WAITING_JOB
    age(plan)
    before = DispatchIntent.objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep()["orchestrator.plans_lost_execution"] == 0
    assert DispatchIntent.objects.count() == before


def test_a_step_parked_on_a_lost_investigation_finishes_after_the_sweep(
    plant, owner, django_capture_on_commit_callbacks
):
    work_order = open_order_whose_investigation_was_lost(plant)
    plan = build_plan(
        owner, [{"capability": "workorders.start_investigation", "inputs": {"work_order_id": work_order.pk}}]
    )
    # Its own investigate message is lost too (the step parks on the job, nothing runs it).
    with django_capture_on_commit_callbacks(execute=False):
        plan_start(plan=plan, actor=owner)
    from orchestrator.services.executor import plan_execute

    with django_capture_on_commit_callbacks(execute=False):
        plan_execute(plan.pk)
    assert plan.steps.get().status == StepStatus.WAITING_JOB
    WorkOrder.objects.filter(pk=work_order.pk).update(updated_at=timezone.now() - LONG_AGO)
    DispatchIntent.objects.update(sent_at=timezone.now() - LONG_AGO, created_at=timezone.now() - LONG_AGO)

    with django_capture_on_commit_callbacks(execute=True):
        sweep()  # re-drives the investigation: the order reaches open
    with django_capture_on_commit_callbacks(execute=True):
        plans_poll_due()  # the beat's poll settles the parked step
    work_order.refresh_from_db()
    plan.refresh_from_db()
    assert work_order.status == "open"
    assert plan.steps.get().status == StepStatus.DONE and plan.status == PlanStatus.COMPLETED


def test_a_job_that_never_progresses_fails_its_step_with_a_reason(owner, settings, django_capture_on_commit_callbacks):
    settings.ARIA_PLAN_JOB_DEADLINE_SECONDS = 600
    plan = build_plan(owner, [{"capability": "otest.start_job", "inputs": {"ref": "never"}}])
    with django_capture_on_commit_callbacks(execute=True):
        plan_start(plan=plan, actor=owner)
    step = plan.steps.get()
    assert step.status == StepStatus.WAITING_JOB
    PlanStep.objects.filter(pk=step.pk).update(updated_at=timezone.now() - timedelta(seconds=599))
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep()["orchestrator.steps_stuck_on_jobs"] == 0  # not yet past its deadline
    PlanStep.objects.filter(pk=step.pk).update(updated_at=timezone.now() - timedelta(seconds=601))
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep()["orchestrator.steps_stuck_on_jobs"] == 1
    step.refresh_from_db()
    plan.refresh_from_db()
    assert step.status == StepStatus.FAILED and "made no progress for 600s" in step.error
    assert plan.status == PlanStatus.FAILED and "made no progress" in plan.error
