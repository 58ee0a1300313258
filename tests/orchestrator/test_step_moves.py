"""Stop one step or skip one (issue 11): POST /plans/{id}/steps/{order}/stop|skip, owner-scoped,
state-checked (409 naming the step's state), audited, announced. A stopped step ends `stopped` and
what depends on it never runs (tests/orchestrator/test_stopped_dependents.py); a skipped one is left
out and the rest runs."""

import pytest

from core.access import OPERATOR
from core.models import AuditRecord, Event
from orchestrator.models import Interaction, Plan, PlanStep
from orchestrator.services.executor import settle_result
from orchestrator.services.step_moves import step_stop
from tests.orchestrator import testcaps
from tests.orchestrator.conftest import build_plan, start

pytestmark = pytest.mark.django_db
API = "/api/v1/aria"


def job_then_read(owner, **kw):
    return build_plan(
        owner,
        [
            {"capability": "otest.start_job", "inputs": {"ref": "slow"}},
            {"capability": "otest.read_value", "inputs": {"key": "k"}, "depends_on": [1]},
        ],
        **kw,
    )


def post(client, plan_id, order, verb, body=None):
    url = f"{API}/plans/{plan_id}/steps/{order}/{verb}"
    if body is None:  # a bare POST, as a button sends it
        return client.generic("POST", url, b"")
    return client.post(url, body, content_type="application/json")


def test_stop_a_step_waiting_on_its_job_and_what_depends_on_it_does_not_run(
    client, operator, django_capture_on_commit_callbacks
):
    plan = start(job_then_read(operator))
    assert plan.steps.get(order=1).status == "waiting_job"
    client.force_login(operator)
    with django_capture_on_commit_callbacks(execute=True):
        res = post(client, plan.pk, 1, "stop", {"reason": "takes too long"})
    assert res.status_code == 200, res.content
    steps = {s["order"]: s for s in res.json()["steps"]}
    assert steps[1]["status"] == "stopped" and steps[1]["error"] == "Stopped by olga: takes too long"
    assert steps[2]["status"] == "skipped"
    assert steps[2]["error"] == "Not run: it depends on step 1 (otest.start_job), which olga stopped."
    assert Plan.objects.get(pk=plan.pk).status == "completed" and "read_value" not in testcaps.CALLS
    audit = AuditRecord.objects.get(action="plan.step_stop")
    assert audit.details["from"] == "waiting_job" and audit.details["reason"] == "takes too long"
    blocked = AuditRecord.objects.get(action="plan.step_blocked")
    assert blocked.details == {"plan_id": plan.pk, "order": 2, "stopped_step": 1, "reason": steps[2]["error"]}
    assert Event.objects.filter(type="plan_updated", payload__step_status="stopped").exists()
    # the job finishing later changes nothing: the step is no longer parked on it
    testcaps.finish_job("slow")
    assert PlanStep.objects.get(plan=plan, order=1).status == "stopped"


def test_a_stopped_running_step_discards_its_late_outcome(operator):
    plan = start(job_then_read(operator))
    step = plan.steps.get(order=1)
    PlanStep.objects.filter(pk=step.pk).update(status="running", idempotency_key="k1")
    step.refresh_from_db()
    step_stop(step=PlanStep.objects.get(pk=step.pk), actor=operator)
    settle_result(plan, step, {"late": True})  # the worker that still ran it reports back
    stopped = PlanStep.objects.get(pk=step.pk)
    assert stopped.status == "stopped" and "late" not in (stopped.result or {}) and stopped.error == "Stopped by olga"


def test_stopping_the_step_an_ask_waits_on_withdraws_it_and_resumes(
    client, operator, django_capture_on_commit_callbacks
):
    plan = build_plan(
        operator,
        [{"capability": "otest.write_effect", "inputs": {"label": "x"}}, {"capability": "otest.read_value", "inputs": {"key": "k"}}],
        autonomy="ask_mutations",
    )  # fmt: skip
    plan = start(plan)
    ask = Interaction.objects.get(plan=plan)
    assert plan.status == "paused" and ask.status == "open"
    client.force_login(operator)
    with django_capture_on_commit_callbacks(execute=True):
        assert post(client, plan.pk, 1, "stop").status_code == 200  # no body: the reason is optional
    ask.refresh_from_db()
    assert ask.status == "answered" and ask.answer["decision"] == "withdrawn"
    assert Plan.objects.get(pk=plan.pk).status == "completed" and testcaps.effect_count("x") == 0


def test_skip_a_pending_step_and_the_refusals(client, operator, make_user):
    plan = job_then_read(operator, status="draft")
    client.force_login(operator)
    stop = post(client, plan.pk, 2, "stop")
    assert stop.status_code == 409 and "nothing of it runs" in stop.json()["detail"]
    res = post(client, plan.pk, 2, "skip", {"reason": "not needed"})
    assert res.status_code == 200 and res.json()["steps"][1]["status"] == "skipped"
    again = post(client, plan.pk, 2, "skip")
    assert again.status_code == 409 and again.json()["status"] == "skipped"
    assert post(client, plan.pk, 9, "skip").status_code == 404
    bad = post(client, plan.pk, 1, "skip", {"reasn": "typo"})
    assert bad.status_code == 422 and PlanStep.objects.get(plan=plan, order=1).status == "pending"
    assert AuditRecord.objects.filter(action="plan.step_skip").count() == 1
    # another operator's plan does not exist for them; the owner's step is untouched
    client.force_login(make_user("mallory", OPERATOR))
    assert post(client, plan.pk, 1, "skip").status_code == 404
    assert PlanStep.objects.get(plan=plan, order=1).status == "pending"


def test_a_finished_plans_steps_are_final(client, operator):
    plan = job_then_read(operator, status="cancelled")
    client.force_login(operator)
    res = post(client, plan.pk, 1, "skip")
    assert res.status_code == 409 and "cancelled" in res.json()["detail"]
