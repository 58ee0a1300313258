"""Execute (resume) racing the executor's ask: a plan waiting for an answer is never set running.

The walkthrough's defect (several Execute clicks on a plan set to ask before every step): one
request read the plan while it still ran, the executor then opened its permission ask and paused it,
and the request's resume moved the paused plan back to `running` — its "waiting for an answer"
check had read the stale row, outside the lock. The plan then stood `running` with an open ask and
a step waiting on it. Now the check is made on the locked row: a 409, and the plan stays paused.
"""

from __future__ import annotations

import pytest

from core.errors import Conflict
from orchestrator.choices import InteractionStatus, PlanStatus, StepStatus
from orchestrator.models import Interaction, Plan
from orchestrator.services.executor import plan_execute, plan_start
from orchestrator.services.plans import plan_transition
from tests.orchestrator.conftest import build_plan

pytestmark = pytest.mark.django_db


def test_a_resume_read_before_the_ask_opened_cannot_run_the_paused_plan(operator):
    plan = build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "a"}}], autonomy="ask_all")
    plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=operator)
    seen_by_the_request = Plan.objects.get(pk=plan.pk)  # the second Execute click: it reads `running`
    assert plan_execute(plan.pk).status == PlanStatus.PAUSED  # the executor asks, the plan pauses
    ask = Interaction.objects.get(plan=plan)

    with pytest.raises(Conflict) as refused:
        plan_start(plan=seen_by_the_request, actor=operator)

    assert refused.value.message == f"Plan {plan.pk} is waiting for an answer."
    assert Plan.objects.get(pk=plan.pk).status == PlanStatus.PAUSED
    ask.refresh_from_db()
    assert ask.status == InteractionStatus.OPEN and ask.step.status == StepStatus.WAITING_INTERACTION


def test_a_paused_plan_with_nothing_to_answer_still_resumes(operator, django_capture_on_commit_callbacks):
    plan = build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "a"}}])
    plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=operator)
    plan_transition(plan=plan, to_status=PlanStatus.PAUSED, actor=operator)
    with django_capture_on_commit_callbacks(execute=True):
        plan_start(plan=Plan.objects.get(pk=plan.pk), actor=operator)
    assert Plan.objects.get(pk=plan.pk).status == PlanStatus.COMPLETED
