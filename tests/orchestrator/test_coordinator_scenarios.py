"""The coordinator scenario suite (issue 5): a fake model gateway chooses tools and actions from
the state it inspected — no phrase matching. Each turn hands the gateway the reading a model would
make of the words (`Reading`: the dialogue act and what the user added); which plan, ask, work
order or profile that means, the gateway has to find with read tools. Each scenario asserts the
tools called, the validated actions, the state after and the transcript; several repeat the same
reading against a different state to show the outcome follows from state.
"""

import re
from datetime import UTC

import pytest

from core.models import AuditRecord
from orchestrator.coordinator.service import coordinator_turn, transcript_verify
from orchestrator.models import CoordinatorTurn, Interaction, Plan
from orchestrator.offline.gateway import fake_gateway
from orchestrator.offline.reading import Reading, keyword_reading
from orchestrator.services.jobs import plan_poll
from orchestrator.services.plans import plan_transition
from tests.orchestrator import testcaps
from tests.orchestrator.conftest import build_plan, start, tools

pytestmark = pytest.mark.django_db
SURVEY = ["list_plans", "list_pending_interactions", "list_approvals", "list_conversation_events"]


WHAT_HAPPENED = Reading("question")
STOP_SMALLER = Reading("stop", smaller=True)
STOP = Reading("stop")
APPLY = Reading("proceed")
RESEARCH_AND_REVIEW = Reading("delegate", text="Research this and have a reviewer check it", profiles=("reviewer",))
EXPLAIN_ONLY = Reading("explain")
REVISE_UI = Reading("revise", text="change the UI behaviour")
NO_DOWNTIME = Reading("guide", text="no downtime")


def turn_on(user, message, reading):
    """One coordinator turn on the fake gateway, which is given `reading` and never the words."""
    return coordinator_turn(user=user, message=message, engine=fake_gateway(reading))


def allowed(turn):
    """The actions that passed validation (state check ok) — what was executed."""
    ok = {c["action_index"] for c in turn.validation if c["check"] == "state" and c["ok"]}
    return [a["type"] for i, a in enumerate(turn.action_plan["actions"]) if i in ok]


def transcript(turn):
    """The persisted turn is the one returned, chained to the previous one, and the chain holds."""
    stored = CoordinatorTurn.objects.get(pk=turn.pk)
    before = CoordinatorTurn.objects.filter(pk__lt=turn.pk).order_by("-id").first()
    assert stored.previous_hash == (before.hash if before else "") and stored.hash
    assert stored.tool_calls == turn.tool_calls and stored.executed == turn.executed
    assert transcript_verify() is None
    return stored


def test_what_happened_after_a_failed_investigation(operator, django_capture_on_commit_callbacks):
    from tests.workorders import factories as f
    from workorders.models import WorkOrder

    wo = f.make_work_order(f.make_cell("P-02"), status="detected")
    step = {"capability": "workorders.start_investigation", "inputs": {"work_order_id": wo.pk}}
    plan = start(build_plan(operator, [step]))
    WorkOrder.objects.filter(pk=wo.pk).update(status="cancelled")  # cancelled before it was analyzed
    with django_capture_on_commit_callbacks(execute=True):
        plan_poll(plan.pk)
    turn = turn_on(operator, "What happened?", WHAT_HAPPENED)
    assert tools(turn) == [*SURVEY, "get_plan", "get_agent_runs"]
    assert turn.tool_calls[-1]["args"]["work_order_id"] == wo.pk
    assert allowed(turn) == ["answer"] and turn.status == "ok"
    assert "cancelled before analysis" in turn.answer and f"Plan {plan.pk}" in turn.answer
    assert "Inspected:" not in turn.answer  # a clean turn's inspections are in its details, not its answer
    assert Plan.objects.get(pk=plan.pk).status == "failed"  # nothing changed
    stored = transcript(turn)
    assert stored.references["plan_ids"] == [plan.pk] and stored.references["work_order_ids"] == [wo.pk]


def test_what_happened_after_a_failed_investigation_with_no_plan(operator):
    """No plan in focus: the packet's investigations point at the Investigator's failed run."""
    from core.models import AgentRun, AgentStep
    from tests.workorders import factories as f

    wo = f.make_work_order(f.make_cell("P-05"), status="detected", title="Seal leak on P-05")
    run = AgentRun.objects.create(
        agent="investigator", engine="fake", subject_type="work_order", subject_id=str(wo.pk), status="failed",
        finish_reason="timeout", error="Wall timeout of 120s exceeded.",
    )  # fmt: skip
    AgentStep.objects.create(run=run, index=0, tool="get_signal_trends", is_error=True, result_summary="error: boom")
    turn = turn_on(operator, "What happened?", WHAT_HAPPENED)
    assert turn.context_packet["investigations"][0]["agent_run_id"] == run.pk
    assert tools(turn) == [*SURVEY, "get_agent_runs", "get_work_order"]
    assert turn.tool_calls[-2]["args"] == {"work_order_id": wo.pk, "agent": "investigator", "limit": 1}
    assert allowed(turn) == ["answer"] and turn.status == "ok"
    assert (
        f"latest run ({run.pk}) on work order {wo.pk} is failed (timeout): Wall timeout of 120s exceeded."
        in turn.answer
    )
    assert "Failed tool calls: get_signal_trends." in turn.answer and "'Seal leak on P-05' is detected" in turn.answer
    assert _status_of(wo) == "detected" and not Plan.objects.exists()  # nothing changed
    assert transcript(turn).references["work_order_ids"] == [wo.pk]


def _status_of(wo):
    wo.refresh_from_db()
    return wo.status


def _investigation(operator, django_capture_on_commit_callbacks):
    from tests.workorders import factories as f

    cell = f.make_cell("P-07")
    wo = f.make_work_order(cell, status="detected")
    steps = [{"capability": "workorders.start_investigation", "inputs": {"work_order_id": wo.pk}}]
    plan = build_plan(operator, steps)
    Plan.objects.filter(pk=plan.pk).update(
        context_refs=[{"type": "work_order", "id": wo.pk}, {"type": "cell", "id": cell.pk}]
    )
    with django_capture_on_commit_callbacks(execute=False):
        plan = start(plan)  # the investigation task is not run: the step stays waiting_job
    return plan, wo, cell


def test_stop_that_one_use_a_smaller_agent(operator, django_capture_on_commit_callbacks):
    plan, wo, cell = _investigation(operator, django_capture_on_commit_callbacks)
    assert plan.status == "running"
    turn = turn_on(operator, "Stop that one, use a smaller agent", STOP_SMALLER)
    # it looked at what ran (the large investigator) before choosing the smaller profile
    assert tools(turn) == [*SURVEY, "get_plan"]
    assert allowed(turn) == ["cancel_plan", "delegate"] and turn.status == "ok"
    assert Plan.objects.get(pk=plan.pk).status == "cancelled"
    new = Plan.objects.get(pk=turn.executed[1]["result"]["plan_id"])
    step = new.steps.get()
    assert new.status == "draft" and step.capability == "orchestrator.run_specialist"
    assert step.inputs["profile"] == "investigator_lite"
    assert step.inputs["context"] == {"work_order_id": wo.pk, "cell_id": cell.pk}
    transcript(turn)
    # the same words now point at the re-delegated draft (the last plan acted on): nothing smaller exists
    again = turn_on(operator, "Stop that one, use a smaller agent", STOP_SMALLER)
    assert allowed(again) == ["cancel_plan"] and again.action_plan["actions"][0]["plan_id"] == new.pk
    assert AuditRecord.objects.filter(action="plan.cancelled", target_id=str(plan.pk)).count() == 1
    third = turn_on(operator, "Stop that one", STOP)
    assert allowed(third) == ["answer"] and third.answer.startswith(
        f"Nothing was stopped: plan {new.pk} is already cancelled."
    )
    assert Plan.objects.count() == 2
    assert [t["user"] for t in third.context_packet["conversation"]] == [turn.message, again.message]


def test_smaller_agent_runs_with_its_own_allowlist_and_model(operator, django_capture_on_commit_callbacks):
    from core.models import AgentRun

    _investigation(operator, django_capture_on_commit_callbacks)
    turn = turn_on(operator, "Stop that one, use a smaller agent", STOP_SMALLER)
    new = Plan.objects.get(pk=turn.executed[1]["result"]["plan_id"])
    plan_transition(plan=new, to_status="approved", actor=operator)
    new = start(new)
    step = new.steps.get()
    assert step.status == "done", step.error
    assert step.result["use_case"] == "extraction" and step.result["profile"] == "investigator_lite"
    assert set(step.result["tools_used"]) <= {t.split(".")[-1] for t in step.result["allowed_tools"]}
    assert "get_signal_trends" in step.result["tools_used"]
    run = AgentRun.objects.get(pk=step.result["agent_run_id"])
    assert run.agent == "investigator" and run.status == "finished"


def test_apply_it_with_a_pending_approval(operator, django_capture_on_commit_callbacks):
    plan = start(build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], autonomy="ask_all"))
    ask = Interaction.objects.get(plan=plan)
    assert ask.coordinator_approvable  # the executor marked a read-tier permission as bounded
    with django_capture_on_commit_callbacks(execute=True):
        turn = turn_on(operator, "Apply it", APPLY)
    assert tools(turn) == SURVEY
    assert allowed(turn) == ["decide_approval"] and turn.executed[0]["result"]["interaction_id"] == ask.pk
    assert Plan.objects.get(pk=plan.pk).status == "completed" and testcaps.CALLS == ["read_value"]
    transcript(turn)


def test_apply_it_on_a_gated_step_presents_and_requests_approval(operator, approver):
    plan = start(build_plan(operator, [{"capability": "otest.release", "inputs": {"label": "x"}}]))
    ask = Interaction.objects.get(plan=plan)
    assert not ask.coordinator_approvable and ask.required_scope
    turn = turn_on(operator, "Apply it", APPLY)
    assert tools(turn) == SURVEY
    assert allowed(turn) == ["present_approval", "request_approval"]
    assert [e["result"]["ok"] for e in turn.executed] == [True, True], turn.executed
    assert "only someone else with the approver scope can decide it" in turn.answer
    assert f"Asked the approvers to decide ask {ask.pk} on plan {plan.pk}." in turn.answer
    ask.refresh_from_db()
    assert ask.status == "open" and ask.evidence["approval_requested_by"] == operator.username
    assert AuditRecord.objects.filter(action="interaction.approval_requested", target_id=str(ask.pk)).count() == 1
    # asked again: the approval was already requested (seen in list_approvals) → present only
    again = turn_on(operator, "Apply it", APPLY)
    assert allowed(again) == ["present_approval"] and testcaps.CALLS == []
    transcript(again)


def test_apply_it_on_a_mutation_is_presented_not_decided(operator):
    plan = start(
        build_plan(operator, [{"capability": "otest.write_effect", "inputs": {"label": "x"}}], autonomy="ask_mutations")
    )
    ask = Interaction.objects.get(plan=plan)
    assert not ask.coordinator_approvable and not ask.required_scope
    turn = turn_on(operator, "Apply it", APPLY)
    assert allowed(turn) == ["present_approval"] and Interaction.objects.get(pk=ask.pk).status == "open"


def test_apply_it_after_it_was_already_applied(operator, django_capture_on_commit_callbacks):
    plan = start(build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], autonomy="ask_all"))
    with django_capture_on_commit_callbacks(execute=True):
        first = turn_on(operator, "Apply it", APPLY)
    assert allowed(first) == ["decide_approval"]
    again = turn_on(operator, "Apply it", APPLY)
    assert tools(again) == SURVEY and allowed(again) == ["answer"]
    assert "already decided (approve) by olga" in again.answer and "completed" in again.answer
    # the time it was decided reads as the pages show times, not as a raw ISO timestamp
    answered_at = Interaction.objects.get(plan=plan).answered_at.astimezone(UTC)
    assert f"by olga at {answered_at:%Y-%m-%d %H:%M} UTC;" in again.answer, again.answer
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:", again.answer), again.answer
    assert AuditRecord.objects.filter(action="interaction.approve").count() == 1
    assert testcaps.CALLS == ["read_value"] and Plan.objects.get(pk=plan.pk).status == "completed"
    transcript(again)


def test_research_this_and_have_a_reviewer_check_it(operator, django_capture_on_commit_callbacks):
    from tests.workorders import factories as f

    cell = f.make_cell("P-03")
    wo = f.make_work_order(cell, status="analyzed")
    turn = turn_on(operator, "Research this and have a reviewer check it", RESEARCH_AND_REVIEW)
    assert tools(turn) == [*SURVEY, "get_work_orders"]
    assert allowed(turn) == ["delegate", "delegate"] and turn.status == "ok"
    plan = Plan.objects.get(pk=turn.executed[0]["result"]["plan_id"])
    steps = list(plan.steps.all())
    # the work order is already analyzed, so research is a KB question, not a new investigation
    assert [(s.capability, s.depends_on) for s in steps] == [
        ("workorders.ask_kb_builder", []),
        ("orchestrator.run_specialist", [1]),
    ]
    assert steps[1].inputs["profile"] == "reviewer" and plan.status == "draft"
    assert transcript(turn).references["work_order_ids"] == [wo.pk]
    # asked again while that plan is open: "this" is now its work order, and a second plan is a duplicate
    again = turn_on(operator, "Research this and have a reviewer check it", RESEARCH_AND_REVIEW)
    assert tools(again) == [*SURVEY, "get_work_order"] and again.tool_calls[-1]["args"] == {"work_order_id": wo.pk}
    assert (
        allowed(again) == [] and again.status == "rejected" and f"plan {plan.pk} (draft) already covers" in again.answer
    )
    assert Plan.objects.count() == 1
    # approve and run: the review step sees the research result
    plan_transition(plan=plan, to_status="approved", actor=operator)
    plan = start(plan)
    review = plan.steps.get(order=2)
    assert plan.status == "completed", [s.error for s in plan.steps.all()]
    assert review.result["output"]["reviewed"] == 1 and review.result["use_case"] == "extraction"


def test_research_a_detected_work_order_is_an_investigation(operator):
    from tests.workorders import factories as f

    f.make_work_order(f.make_cell("P-04"), status="detected")
    turn = turn_on(operator, "Research this and have a reviewer check it", RESEARCH_AND_REVIEW)
    plan = Plan.objects.get(pk=turn.executed[0]["result"]["plan_id"])
    assert [s.capability for s in plan.steps.all()] == ["workorders.start_investigation", "orchestrator.run_specialist"]


def test_dont_start_work_yet_just_explain_the_plan(operator):
    plan = build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], status="draft")
    turn = turn_on(operator, "Don't start work yet, just explain the plan", EXPLAIN_ONLY)
    assert tools(turn) == [*SURVEY, "get_plan"] and allowed(turn) == ["answer"]
    assert "otest.read_value" in turn.answer and f"Plan {plan.pk}" in turn.answer
    assert Plan.objects.get(pk=plan.pk).status == "draft" and testcaps.CALLS == []
    transcript(turn)


def test_use_the_previous_plan_but_change_the_ui_behaviour(operator):
    previous = build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], status="completed")
    Plan.objects.filter(pk=previous.pk).update(goal="Read the backlog")
    turn = turn_on(operator, "Use the previous plan but change the UI behaviour", REVISE_UI)
    assert tools(turn) == SURVEY and allowed(turn) == ["create_plan"] and turn.status == "ok"
    new = Plan.objects.get(pk=turn.executed[0]["result"]["plan_id"])
    assert new.status == "draft" and new.goal == "Read the backlog — change the UI behaviour"
    assert Plan.objects.get(pk=previous.pk).status == "completed"
    transcript(turn)


def test_continue_the_last_run_with_this_added_constraint(operator):
    plan = start(build_plan(operator, [{"capability": "otest.start_job", "inputs": {"ref": "j"}}]))
    turn = turn_on(operator, "Continue the last run with this added constraint: no downtime", NO_DOWNTIME)
    assert tools(turn) == SURVEY and allowed(turn) == ["attach_guidance"]
    assert Plan.objects.get(pk=plan.pk).constraints["guidance"] == ["no downtime"]
    assert Plan.objects.count() == 1
    transcript(turn)
    # the same words once that run is finished: there is nothing to guide, so no guidance is attached
    Plan.objects.filter(pk=plan.pk).update(status="completed")
    later = turn_on(operator, "Continue the last run with this added constraint: no downtime", NO_DOWNTIME)
    assert "attach_guidance" not in allowed(later)
    assert Plan.objects.get(pk=plan.pk).constraints["guidance"] == ["no downtime"]


def test_what_happened_is_about_the_plan_that_just_finished_not_an_older_untouched_draft(operator):
    """A draft nobody started is not 'what happened': the newest plan is, unless one is in flight."""
    draft = build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], status="draft")
    done = build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], status="completed")
    turn = turn_on(operator, "What happened?", WHAT_HAPPENED)
    assert f"Plan {done.pk}" in turn.answer and f"Plan {draft.pk} " not in turn.answer, turn.answer
    # every check that passed carries no failure reason (the explain view showed "✓ … not visible")
    assert all(c["reason"] == "" for c in turn.validation if c["ok"]), turn.validation


def test_the_gateway_decides_from_the_reading_and_state_never_the_words(operator, django_capture_on_commit_callbacks):
    """Words the offline keyword reader could not parse (German) give the same turn when the reading
    is the same; the same words with another reading give another turn."""
    plan, wo, cell = _investigation(operator, django_capture_on_commit_callbacks)
    words = "Hör damit auf und nimm einen kleineren Agenten"
    assert keyword_reading(words, {}).act == "unclear"  # the offline stand-in does not understand it
    german = turn_on(operator, words, STOP_SMALLER)
    assert tools(german) == [*SURVEY, "get_plan"] and allowed(german) == ["cancel_plan", "delegate"]
    new = Plan.objects.get(pk=german.executed[1]["result"]["plan_id"])
    assert (
        new.steps.get().inputs["profile"] == "investigator_lite" and Plan.objects.get(pk=plan.pk).status == "cancelled"
    )
    assert new.steps.get().inputs["context"] == {"work_order_id": wo.pk, "cell_id": cell.pk}
    # the English words, read as a question: nothing is stopped, the plan is explained
    question = turn_on(operator, "Stop that one, use a smaller agent", WHAT_HAPPENED)
    assert allowed(question) == ["answer"] and f"Plan {new.pk}" in question.answer
    assert Plan.objects.get(pk=new.pk).status == "draft"


def test_plan_a_limit_change_from_the_chat_drafts_a_gated_step(operator):
    """New work asked for in the chat becomes a draft the user approves; its gated step waits for
    an approver later. Asked again while the draft is open, it is a duplicate."""
    from tests.workorders import factories as f

    f.make_signal(f.make_cell("P-02"))
    goal = "Raise the P-02 vibration alert limit to 4.8 mm/s because the new bearing runs warmer"
    turn = turn_on(operator, f"Plan: {goal}", Reading("plan", text=goal))
    assert tools(turn) == SURVEY and allowed(turn) == ["create_plan"] and turn.status == "ok"
    plan = Plan.objects.get(pk=turn.executed[0]["result"]["plan_id"])
    assert plan.status == "draft" and plan.goal == goal
    assert f"Drafted plan {plan.pk} with 2 step(s); it waits for your approval" in turn.answer
    steps = [(s.capability, s.tier) for s in plan.steps.all()]
    assert steps == [("workorders.get_current_signals", "read"), ("sentinel.change_signal_limits", "gated")]
    assert plan.steps.get(order=2).inputs["alert"] == 4.8
    transcript(turn)
    again = turn_on(operator, f"Plan: {goal}", Reading("plan", text=goal))
    assert allowed(again) == [] and again.status == "rejected" and Plan.objects.count() == 1
