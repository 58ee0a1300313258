from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.access import APPROVER, OPERATOR
from core.audit import audit_verify
from core.errors import Conflict, Forbidden, InvalidInput
from core.models import AuditRecord, Event
from orchestrator.choices import PlanStatus, StepStatus
from orchestrator.models import Interaction, Plan, PlanStep
from orchestrator.services import executor
from orchestrator.services.executor import _claim, plan_execute
from orchestrator.services.interactions import interaction_answer
from orchestrator.services.jobs import plan_poll
from tests.orchestrator import testcaps
from tests.orchestrator.conftest import build_plan, start

pytestmark = pytest.mark.django_db


def read(n=1):
    return {"capability": "otest.read_value", "inputs": {"key": "k", "n": n}}


def test_read_plan_runs_to_completion_and_publishes(owner):
    plan = start(build_plan(owner, [read(1), read(2)]))
    assert plan.status == PlanStatus.COMPLETED
    steps = list(plan.steps.all())
    assert [s.status for s in steps] == ["done", "done"]
    assert steps[1].result == {"key": "k", "value": 2}
    assert all(s.attempts == 1 and s.idempotency_key for s in steps)
    updates = Event.objects.filter(type="plan_updated", payload__plan_id=plan.pk)
    assert {e.payload["status"] for e in updates} >= {"running", "completed"}


def test_owner_scopes_checked_before_the_handler(owner):
    plan = start(build_plan(owner, [{"capability": "otest.approver_only"}]))
    assert plan.status == PlanStatus.FAILED
    step = plan.steps.get()
    assert step.status == StepStatus.FAILED and "lacks scope approver" in step.error
    assert "approver_only" not in testcaps.CALLS


def test_dependencies_wait_for_their_steps(owner):
    plan = build_plan(
        owner, [{"capability": "otest.start_job", "inputs": {"ref": "dep"}}, {**read(), "depends_on": [1]}]
    )
    plan = start(plan)
    assert plan.status == PlanStatus.RUNNING
    assert [s.status for s in plan.steps.all()] == ["waiting_job", "pending"]


def test_ask_all_pauses_with_permission_and_owner_answer_resumes(owner, django_capture_on_commit_callbacks):
    plan = start(build_plan(owner, [read()], autonomy="ask_all"))
    assert plan.status == PlanStatus.PAUSED
    ask = Interaction.objects.get(plan=plan)
    assert ask.kind == "permission" and ask.required_scope == "" and ask.status == "open"
    assert Event.objects.filter(type="interaction_needed", payload__interaction_id=ask.pk).exists()
    assert testcaps.CALLS == []
    with django_capture_on_commit_callbacks(execute=True):
        interaction_answer(interaction=ask, actor=owner, decision="approve")
    plan.refresh_from_db()
    assert plan.status == PlanStatus.COMPLETED
    assert AuditRecord.objects.filter(action="interaction.approve", target_id=str(ask.pk)).exists()


def test_permission_answer_may_edit_inputs_validated(owner, django_capture_on_commit_callbacks):
    plan = start(build_plan(owner, [read(1)], autonomy="ask_all"))
    ask = Interaction.objects.get(plan=plan)
    with pytest.raises(InvalidInput) as bad:
        interaction_answer(interaction=ask, actor=owner, decision="approve", inputs={"key": "k", "n": "many"})
    assert bad.value.field == "inputs.n"
    with django_capture_on_commit_callbacks(execute=True):
        interaction_answer(interaction=ask, actor=owner, decision="approve", inputs={"key": "edited", "n": 5})
    step = plan.steps.get()
    assert step.inputs == {"key": "edited", "n": 5} and step.result == {"key": "edited", "value": 5}


def test_rejected_permission_skips_the_step(owner, django_capture_on_commit_callbacks):
    plan = start(build_plan(owner, [read(), read(2)], autonomy="ask_all"))
    with django_capture_on_commit_callbacks(execute=True):
        interaction_answer(interaction=Interaction.objects.get(plan=plan), actor=owner, decision="reject")
    assert plan.steps.get(order=1).status == StepStatus.SKIPPED
    # the next step asks in its turn
    assert Interaction.objects.filter(plan=plan, status="open").count() == 1


def test_answered_twice_is_a_conflict(owner, django_capture_on_commit_callbacks):
    plan = start(build_plan(owner, [read()], autonomy="ask_all"))
    ask = Interaction.objects.get(plan=plan)
    with django_capture_on_commit_callbacks(execute=True):
        interaction_answer(interaction=ask, actor=owner, decision="approve")
    with pytest.raises(Conflict):
        interaction_answer(interaction=ask, actor=owner, decision="approve")


def test_another_operator_cannot_answer_a_permission(owner, make_user):
    plan = start(build_plan(owner, [read()], autonomy="ask_all"))
    with pytest.raises(Forbidden):
        interaction_answer(
            interaction=Interaction.objects.get(plan=plan), actor=make_user("other", OPERATOR), decision="approve"
        )


# --- separation of duties ------------------------------------------------------------------------


def gated_plan(owner):
    plan = start(build_plan(owner, [{"capability": "otest.release", "inputs": {"label": "v1"}}], autonomy="auto"))
    assert plan.status == PlanStatus.PAUSED
    return plan, Interaction.objects.get(plan=plan)


def test_gated_step_asks_even_on_auto_and_owner_is_refused(owner):
    _plan, ask = gated_plan(owner)
    assert ask.required_scope == APPROVER
    with pytest.raises(Forbidden) as refused:
        interaction_answer(interaction=ask, actor=owner, decision="approve")
    assert refused.value.code == "separation_of_duties"
    assert "release" not in testcaps.CALLS


def test_owner_refused_even_when_owner_is_an_approver(make_user):
    owner = make_user("both", OPERATOR, APPROVER)
    _plan, ask = gated_plan(owner)
    with pytest.raises(Forbidden):
        interaction_answer(interaction=ask, actor=owner, decision="approve")


def test_gated_step_approved_by_another_approver_runs(owner, approver, django_capture_on_commit_callbacks):
    plan, ask = gated_plan(owner)
    with django_capture_on_commit_callbacks(execute=True):
        interaction_answer(interaction=ask, actor=approver, decision="approve")
    plan.refresh_from_db()
    assert plan.status == PlanStatus.COMPLETED and testcaps.CALLS == ["release"]
    ask.refresh_from_db()
    assert ask.answered_by == approver and ask.status == "answered"
    assert audit_verify() is None


def test_operator_without_scope_and_service_account_are_refused(owner, make_user):
    from core.models import ServiceAccount

    _plan, ask = gated_plan(owner)
    with pytest.raises(Forbidden):
        interaction_answer(interaction=ask, actor=make_user("op2", OPERATOR), decision="approve")
    bot = make_user("release-bot", APPROVER)
    ServiceAccount.objects.create(user=bot, role="release")
    with pytest.raises(Forbidden) as refused:
        interaction_answer(interaction=ask, actor=bot, decision="approve")
    assert "service account" in refused.value.message


def test_unmapped_required_scope_denies_everyone(owner, admin_user):
    _plan, ask = gated_plan(owner)
    Interaction.objects.filter(pk=ask.pk).update(required_scope="plant_manager")
    ask.refresh_from_db()
    with pytest.raises(Forbidden):
        interaction_answer(interaction=ask, actor=admin_user, decision="approve")


# --- quality gates ----------------------------------------------------------------------------------


def scored(score):
    return {
        "capability": "otest.score",
        "inputs": {"score": score},
        "quality_gate": {"field": "quality.score", "op": "gte", "threshold": 0.7},
    }


def test_quality_gate_pass_is_done(owner):
    assert start(build_plan(owner, [scored(0.9)])).status == PlanStatus.COMPLETED


@pytest.mark.parametrize(("decision", "final"), [("accept", "done"), ("reject", "skipped")])
def test_failing_gate_asks_to_confirm(owner, decision, final, django_capture_on_commit_callbacks):
    plan = start(build_plan(owner, [scored(0.4), read()]))
    assert plan.status == PlanStatus.PAUSED
    ask = Interaction.objects.get(plan=plan)
    assert ask.kind == "confirm" and ask.evidence["value"] == 0.4
    assert ask.evidence["quality_gate"]["threshold"] == 0.7
    with django_capture_on_commit_callbacks(execute=True):
        interaction_answer(interaction=ask, actor=owner, decision=decision)
    step = plan.steps.get(order=1)
    assert step.status == final and step.result == {"quality": {"score": 0.4}}
    plan.refresh_from_db()
    assert plan.status == PlanStatus.COMPLETED


# --- async jobs -------------------------------------------------------------------------------------


def test_job_parks_and_poll_resumes(owner, django_capture_on_commit_callbacks):
    plan = start(
        build_plan(owner, [{"capability": "otest.start_job", "inputs": {"ref": "j1"}}, {**read(), "depends_on": [1]}])
    )
    step = plan.steps.get(order=1)
    assert step.status == StepStatus.WAITING_JOB and (step.job_kind, step.job_ref) == ("otest_job", "j1")
    with django_capture_on_commit_callbacks(execute=True):
        plan_poll(plan.pk)  # still pending
    assert plan.steps.get(order=1).status == StepStatus.WAITING_JOB
    testcaps.finish_job("j1", confidence=0.8)
    with django_capture_on_commit_callbacks(execute=True):
        plan_poll(plan.pk)
    plan.refresh_from_db()
    assert plan.status == PlanStatus.COMPLETED
    assert plan.steps.get(order=1).result["confidence"] == 0.8


def test_failed_job_fails_the_plan(owner, django_capture_on_commit_callbacks):
    plan = start(build_plan(owner, [{"capability": "otest.start_job", "inputs": {"ref": "j2"}}]))
    testcaps.finish_job("j2", state="failed", error="agent crashed")
    with django_capture_on_commit_callbacks(execute=True):
        plan_poll(plan.pk)
    plan.refresh_from_db()
    assert plan.status == PlanStatus.FAILED and "agent crashed" in plan.error


def test_beat_task_polls_parked_plans(owner, django_capture_on_commit_callbacks):
    from orchestrator.tasks import poll_jobs_task

    plan = start(build_plan(owner, [{"capability": "otest.start_job", "inputs": {"ref": "j3"}}]))
    testcaps.finish_job("j3")
    with django_capture_on_commit_callbacks(execute=True):
        assert poll_jobs_task() == 1
    plan.refresh_from_db()
    assert plan.status == PlanStatus.COMPLETED


# --- durability -------------------------------------------------------------------------------------


class Killed(BaseException):
    """A worker dying mid-step (not an Exception: nothing catches it)."""


def test_crash_after_side_effect_does_not_apply_it_twice(owner, monkeypatch):
    plan = build_plan(owner, [{"capability": "otest.write_effect", "inputs": {"label": "once"}}])
    original = executor.settle_result

    def die(*args, **kwargs):
        raise Killed

    monkeypatch.setattr(executor, "settle_result", die)
    with pytest.raises(Killed):
        start(plan)
    step = plan.steps.get()
    assert step.status == StepStatus.RUNNING and testcaps.effect_count("once") == 1
    key = step.idempotency_key
    monkeypatch.setattr(executor, "settle_result", original)
    # within the lease another pass leaves it alone; once stale, the step resumes with the same key
    assert plan_execute(plan.pk).status == PlanStatus.RUNNING and testcaps.CALLS == ["write_effect"]
    plan = plan_execute(plan.pk, stale_after=timedelta(0))
    assert plan.status == PlanStatus.COMPLETED
    step.refresh_from_db()
    assert step.idempotency_key == key and step.attempts == 1
    assert testcaps.CALLS == ["write_effect", "write_effect"]  # re-run, but the key made it a no-op
    assert testcaps.effect_count("once") == 1


def test_crash_before_the_handler_runs_it_exactly_once(owner, monkeypatch):
    plan = build_plan(owner, [{"capability": "otest.write_effect", "inputs": {"label": "first"}}])

    def die(*args, **kwargs):
        raise Killed

    monkeypatch.setattr(executor, "dispatch", die)
    with pytest.raises(Killed):
        start(plan)
    assert plan.steps.get().status == StepStatus.RUNNING and testcaps.effect_count("first") == 0
    monkeypatch.undo()
    plan = plan_execute(plan.pk, stale_after=timedelta(0))
    assert plan.status == PlanStatus.COMPLETED
    assert testcaps.CALLS == ["write_effect"] and testcaps.effect_count("first") == 1


def test_two_workers_never_claim_the_same_step(owner):
    plan = build_plan(owner, [read()])
    from orchestrator.services.plans import plan_transition

    plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=owner)
    a, b = PlanStep.objects.get(plan=plan), PlanStep.objects.get(plan=plan)
    assert _claim(plan, a) is True
    assert _claim(plan, b) is False
    # a second executor pass sees the step running and does not run it
    assert plan_execute(plan.pk).status == PlanStatus.RUNNING and testcaps.CALLS == []


def test_no_step_runs_once_the_plan_is_cancelled(owner):
    from orchestrator.services.plans import plan_transition

    plan = build_plan(owner, [read()])
    plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=owner)
    step = plan.steps.get()
    plan_transition(plan=plan, to_status=PlanStatus.CANCELLED, actor=owner)
    assert _claim(plan, step) is False


# --- cost -------------------------------------------------------------------------------------------


def queries_for(owner, n):
    plan = build_plan(owner, [read(i) for i in range(n)])
    from orchestrator.services.plans import plan_transition

    plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=owner)
    owner = type(owner).objects.get(pk=owner.pk)  # no cached scopes
    with CaptureQueriesContext(connection) as ctx:
        assert plan_execute(plan.pk).status == PlanStatus.COMPLETED
    return len(ctx.captured_queries)


@pytest.mark.usefixtures("steady_registry")
def test_queries_per_step_are_constant(owner):
    small, large = queries_for(owner, 5), queries_for(owner, 10)
    per_step = (large - small) / 5
    assert per_step == int(per_step)
    assert queries_for(owner, 20) - large == per_step * 10
    assert per_step <= 8


# --- races with humans --------------------------------------------------------------------------------


def _interfering(monkeypatch, to_status):
    """While a step's handler runs, someone pauses or cancels the plan."""
    from orchestrator.services.plans import plan_transition

    original = executor._dispatch

    def dispatch_and_interfere(plan, step):
        result = original(plan, step)
        plan_transition(plan=Plan.objects.get(pk=plan.pk), to_status=to_status, actor=None)
        return result

    monkeypatch.setattr(executor, "_dispatch", dispatch_and_interfere)


def test_pause_during_a_step_stops_before_the_next(owner, monkeypatch):
    _interfering(monkeypatch, PlanStatus.PAUSED)
    plan = start(build_plan(owner, [read(), {"capability": "otest.release", "inputs": {"label": "x"}}]))
    assert plan.status == PlanStatus.PAUSED
    assert [s.status for s in plan.steps.all()] == ["done", "pending"]
    assert not Interaction.objects.filter(plan=plan).exists()  # no ask opened on a paused plan


def test_cancel_during_the_last_step_wins_over_completion(owner, monkeypatch):
    _interfering(monkeypatch, PlanStatus.CANCELLED)
    plan = start(build_plan(owner, [read()]))
    assert plan.status == PlanStatus.CANCELLED and plan.steps.get().status == StepStatus.DONE


def test_asks_of_a_cancelled_plan_are_closed(owner):
    from orchestrator.selectors import interactions_needing
    from orchestrator.services.plans import plan_cancel

    plan = start(build_plan(owner, [read()], autonomy="ask_all"))
    ask = Interaction.objects.get(plan=plan)
    assert list(interactions_needing(owner)) == [ask]
    plan_cancel(plan=plan, actor=owner)
    assert list(interactions_needing(owner)) == []
    with pytest.raises(Conflict):
        interaction_answer(interaction=ask, actor=owner, decision="approve")


def test_beat_picks_up_a_running_plan_whose_execute_message_was_lost(owner, django_capture_on_commit_callbacks):
    from django.utils import timezone

    from orchestrator.services.executor import plans_needing_attention
    from orchestrator.services.plans import plan_transition
    from orchestrator.tasks import poll_jobs_task

    plan = build_plan(owner, [read()])
    plan_transition(plan=plan, to_status=PlanStatus.RUNNING, actor=owner)  # ... and the worker never got it
    assert plans_needing_attention() == []  # within the lease: an executor may still be on its way
    old = timezone.now() - timedelta(hours=1)
    Plan.objects.filter(pk=plan.pk).update(updated_at=old)
    PlanStep.objects.filter(plan=plan).update(updated_at=old)
    assert plans_needing_attention() == [plan.pk]
    with django_capture_on_commit_callbacks(execute=True):
        poll_jobs_task()
    assert Plan.objects.get(pk=plan.pk).status == PlanStatus.COMPLETED
