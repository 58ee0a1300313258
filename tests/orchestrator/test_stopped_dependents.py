"""A stopped step's dependents never run as if its output existed (issue 11): stopping a step ends it
`stopped`, and every step built on it — directly or through other steps — that has not started is
skipped with a reason naming the stopped step, audited; the executor holds to the same rule on its
own. A skipped step is different: it was left out, and what depends on it runs without it."""

import pytest

from core.models import AuditRecord
from orchestrator.coordinator.service import confirm_command, coordinator_turn
from orchestrator.models import Interaction, Plan, PlanStep
from orchestrator.services.executor import plan_execute, ready_steps
from orchestrator.services.jobs import plan_poll
from orchestrator.services.plans import plan_approve
from orchestrator.services.step_moves import step_skip, stopped_roots
from tests.orchestrator import testcaps
from tests.orchestrator.conftest import build_plan, start

pytestmark = pytest.mark.django_db
API = "/api/v1/aria"


def chain(owner, **kw):
    """1 a job · 2 a mutation on step 1's output · 3 a note after 2 · 4 a read on its own."""
    return build_plan(
        owner,
        [
            {"capability": "otest.start_job", "inputs": {"ref": "slow"}},
            {"capability": "otest.write_effect", "inputs": {"label": "from-step-1"}, "depends_on": [1]},
            {"capability": "otest.note", "inputs": {"label": "after-2"}, "depends_on": [2]},
            {"capability": "otest.read_value", "inputs": {"key": "k"}},
        ],
        **kw,
    )


def statuses(plan):
    return {s.order: (s.status, s.error) for s in PlanStep.objects.filter(plan=plan)}


def test_hostile_a_step_using_the_stopped_steps_output_never_executes(
    client, operator, django_capture_on_commit_callbacks
):
    plan = start(chain(operator))
    assert statuses(plan)[1][0] == "waiting_job" and statuses(plan)[4][0] == "done"
    client.force_login(operator)
    with django_capture_on_commit_callbacks(execute=True):
        res = client.post(f"{API}/plans/{plan.pk}/steps/1/stop", {"reason": "wrong pump"}, "application/json")
    assert res.status_code == 200, res.content
    now = statuses(plan)
    assert now[1] == ("stopped", "Stopped by olga: wrong pump")
    assert now[2] == ("skipped", "Not run: it depends on step 1 (otest.start_job), which olga stopped.")
    assert now[3] == (
        "skipped",
        "Not run: it depends on step 1 (otest.start_job) (through step 2), which olga stopped.",
    )
    # the job ends later and the beat polls: still nothing built on step 1 runs
    testcaps.finish_job("slow", work_order_id=7)
    with django_capture_on_commit_callbacks(execute=True):
        plan_poll(plan.pk)
        plan_execute(plan.pk)
    assert testcaps.effect_count("from-step-1") == 0
    assert "write_effect" not in testcaps.CALLS and "note" not in testcaps.CALLS
    assert Plan.objects.get(pk=plan.pk).status == "completed" and statuses(plan) == now
    blocked = AuditRecord.objects.filter(action="plan.step_blocked").order_by("id")
    assert [(a.details["order"], a.details["stopped_step"], a.actor_id) for a in blocked] == [
        (2, 1, operator.pk),
        (3, 1, operator.pk),
    ]
    shown = client.get(f"{API}/plans/{plan.pk}").json()["steps"]
    assert [s["status"] for s in shown] == ["stopped", "skipped", "skipped", "done"]


def test_the_executor_blocks_on_its_own_a_dependent_of_a_stopped_step(operator):
    """Whoever wrote the stop (here: a row already `stopped`, as the migration turns old stops into),
    the executor never claims a step built on it: it skips it with the reason, audited."""
    plan = chain(operator)
    PlanStep.objects.filter(plan=plan, order=1).update(status="stopped", error="Stopped by olga")
    assert [s.order for s in ready_steps(list(plan.steps.all()))] == [4]
    start(plan)
    now = statuses(plan)
    assert now[2] == ("skipped", "Not run: it depends on step 1 (otest.start_job), which was stopped.")
    assert now[3][0] == "skipped" and now[4][0] == "done"
    assert testcaps.CALLS == ["read_value"] and Plan.objects.get(pk=plan.pk).status == "completed"
    assert AuditRecord.objects.filter(action="plan.step_blocked", actor=None).count() == 2


def test_a_dependent_is_never_ready_even_behind_a_skipped_step(operator):
    plan = chain(operator)
    PlanStep.objects.filter(plan=plan, order=1).update(status="stopped")
    PlanStep.objects.filter(plan=plan, order=2).update(status="skipped")  # its own dependency looks settled
    steps = list(plan.steps.all())
    assert {o: r.order for o, r in stopped_roots(steps).items()} == {1: 1, 2: 1, 3: 1}
    assert [s.order for s in ready_steps(steps)] == [4]


def test_stopping_the_step_a_permission_waits_on_blocks_its_dependents(
    client, operator, django_capture_on_commit_callbacks
):
    plan = build_plan(
        operator,
        [
            {"capability": "otest.write_effect", "inputs": {"label": "x"}},
            {"capability": "otest.note", "inputs": {"label": "uses x"}, "depends_on": [1]},
        ],
        autonomy="ask_mutations",
    )
    plan = start(plan)
    ask = Interaction.objects.get(plan=plan)
    client.force_login(operator)
    with django_capture_on_commit_callbacks(execute=True):
        assert client.generic("POST", f"{API}/plans/{plan.pk}/steps/1/stop", b"").status_code == 200
    ask.refresh_from_db()
    assert ask.answer["decision"] == "withdrawn" and statuses(plan)[1][0] == "stopped"
    assert statuses(plan)[2][0] == "skipped" and "note" not in testcaps.CALLS
    assert Plan.objects.get(pk=plan.pk).status == "completed" and testcaps.effect_count("x") == 0


def test_a_skipped_step_is_left_out_and_what_depends_on_it_runs(operator, django_capture_on_commit_callbacks):
    plan = chain(operator, status="draft")
    step_skip(step=plan.steps.get(order=1), actor=operator, reason="done by hand")
    plan_approve(plan=plan, actor=operator)
    start(plan)
    now = statuses(plan)
    assert now[1] == ("skipped", "Skipped by olga: done by hand")
    assert now[2][0] == now[3][0] == now[4][0] == "done" and testcaps.effect_count("from-step-1") == 1
    assert not AuditRecord.objects.filter(action="plan.step_blocked").exists()


# --- the coordinator's words: a skip is not a stop -----------------------------------------------------


def test_skip_of_a_running_step_is_not_turned_into_a_stop(operator, django_capture_on_commit_callbacks):
    plan = start(chain(operator))
    turn = coordinator_turn(user=operator, message=f"Skip step 1 of plan {plan.pk}")
    assert "Stopping step" not in turn.answer and "cannot be skipped" in turn.answer
    assert "Stopping it would also keep steps 2, 3 from running." in turn.answer
    assert [e["type"] for e in turn.executed] == ["answer"] and statuses(plan)[1][0] == "waiting_job"
    assert f"To confirm: stop step 1 of plan {plan.pk}" in turn.answer  # put forward, not done
    with django_capture_on_commit_callbacks(execute=True):
        confirmed = coordinator_turn(user=operator, message=confirm_command(turn.pk, 1))
    assert [e["type"] for e in confirmed.executed] == ["stop_step"]
    assert statuses(plan)[1][0] == "stopped" and statuses(plan)[2][0] == "skipped"


def test_stop_of_a_pending_step_says_it_skips_it_and_what_still_runs(operator):
    plan = chain(operator, status="draft")
    turn = coordinator_turn(user=operator, message=f"Stop step 2 of plan {plan.pk}")
    assert [e["type"] for e in turn.executed] == ["skip_step"], turn.answer
    assert "Skipping step 2. It has not started, so it is skipped rather than stopped; step 3 will run" in turn.answer
    assert f"Step 2 of plan {plan.pk} is now skipped; the plan goes on without it." in turn.answer
    assert statuses(plan)[3][0] == "pending"
