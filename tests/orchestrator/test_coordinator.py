"""Coordinator scenarios: the offline model chooses tools from inspected state; the validator decides."""

import pytest

from core.access import OPERATOR
from core.agents.engines.fake import FakeEngine, FakeReply
from core.models import AuditRecord
from orchestrator.coordinator.service import coordinator_turn, transcript_verify
from orchestrator.models import CoordinatorTurn, Interaction, Plan
from tests.orchestrator import testcaps
from tests.orchestrator.conftest import build_plan, start

pytestmark = pytest.mark.django_db


def job_plan(owner, ref="job-1", **kw):
    return build_plan(owner, [{"capability": "otest.start_job", "inputs": {"ref": ref}}], **kw)


def scripted(*actions, summary="Done.", read=True, references=None):
    replies = [FakeReply(tool_calls=[("list_plans", {})])] if read else []
    plan = {"summary": summary, "actions": list(actions), "references": references or {}}
    return FakeEngine(script=[*replies, FakeReply(tool_calls=[("submit_action_plan", plan)])])


def tools(turn):
    return [c["tool"] for c in turn.tool_calls]


def test_what_happened_after_a_failed_job(operator, django_capture_on_commit_callbacks):
    plan = start(job_plan(operator, "inv-9"))
    testcaps.finish_job("inv-9", state="failed", error="investigator timed out")
    from orchestrator.services.jobs import plan_poll

    with django_capture_on_commit_callbacks(execute=True):
        plan_poll(plan.pk)
    turn = coordinator_turn(user=operator, message="What happened?")
    assert tools(turn) == ["list_plans", "list_pending_interactions", "get_plan"]
    assert turn.status == "ok" and [e["type"] for e in turn.executed] == ["answer"]
    assert "investigator timed out" in turn.answer and f"Plan {plan.pk}" in turn.answer
    assert turn.references["plan_ids"] == [plan.pk]
    assert turn.context_packet["recent_plans"][0]["status"] == "failed"


def test_stop_that_one_cancels_once(operator):
    plan = start(job_plan(operator))
    turn = coordinator_turn(user=operator, message="Stop that one, use a smaller agent")
    assert [e["type"] for e in turn.executed] == ["cancel_plan"]
    assert Plan.objects.get(pk=plan.pk).status == "cancelled"
    # "stop that" again: nothing active is left to stop; the offline model explains instead
    again = coordinator_turn(user=operator, message="stop that")
    assert [e["type"] for e in again.executed] == ["answer"] and "cancelled" in again.answer
    # a model that repeats itself anyway is stopped by the validator
    repeat = coordinator_turn(
        user=operator, message="stop that", engine=scripted({"type": "cancel_plan", "plan_id": plan.pk})
    )
    assert repeat.status == "rejected" and repeat.executed == []
    assert "already cancelled" in repeat.answer
    assert AuditRecord.objects.filter(action="plan.cancelled", target_id=str(plan.pk)).count() == 1
    # the packet carries the whole conversation
    assert [t["user"] for t in repeat.context_packet["conversation"]] == [
        "Stop that one, use a smaller agent",
        "stop that",
    ]


def test_apply_it_with_a_pending_approval_then_again(operator, django_capture_on_commit_callbacks):
    plan = start(build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], autonomy="ask_all"))
    ask = Interaction.objects.get(plan=plan)
    with django_capture_on_commit_callbacks(execute=True):
        turn = coordinator_turn(user=operator, message="Apply it")
    assert [e["type"] for e in turn.executed] == ["decide_approval"]
    assert Plan.objects.get(pk=plan.pk).status == "completed"
    repeat = coordinator_turn(
        user=operator,
        message="Apply it",
        engine=scripted({"type": "decide_approval", "interaction_id": ask.pk, "decision": "approve"}),
    )
    assert repeat.status == "rejected" and "already decided" in repeat.answer
    assert AuditRecord.objects.filter(action="interaction.approve", target_id=str(ask.pk)).count() == 1


def test_apply_it_on_a_gated_step_stays_human(operator):
    plan = start(build_plan(operator, [{"capability": "otest.release", "inputs": {"label": "x"}}]))
    ask = Interaction.objects.get(plan=plan)
    turn = coordinator_turn(user=operator, message="Apply it")
    assert [e["type"] for e in turn.executed] == ["present_approval"]
    forced = coordinator_turn(
        user=operator,
        message="Apply it",
        engine=scripted({"type": "decide_approval", "interaction_id": ask.pk, "decision": "approve"}),
    )
    assert forced.status == "rejected" and "gated approval stays human" in forced.answer
    assert Interaction.objects.get(pk=ask.pk).status == "open" and testcaps.CALLS == []


def test_explain_the_plan_without_starting_work(operator):
    plan = build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], status="draft")
    turn = coordinator_turn(user=operator, message="Don't start work yet, just explain the plan")
    assert [e["type"] for e in turn.executed] == ["answer"] and "otest.read_value" in turn.answer
    assert Plan.objects.get(pk=plan.pk).status == "draft" and testcaps.CALLS == []


def test_run_it_again_while_it_runs_is_a_duplicate(operator):
    plan = start(job_plan(operator))
    Plan.objects.filter(pk=plan.pk).update(context_refs=[{"type": "work_order", "id": 5}])
    turn = coordinator_turn(user=operator, message="Run it again")
    assert turn.status == "rejected" and turn.executed == []
    assert f"plan {plan.pk} (running) already covers this" in turn.answer
    assert Plan.objects.count() == 1


def test_continue_with_an_added_constraint_guides_the_running_plan(operator):
    plan = start(job_plan(operator))
    turn = coordinator_turn(user=operator, message="Continue the last run with this added constraint: no downtime")
    assert [e["type"] for e in turn.executed] == ["attach_guidance"]
    assert "no downtime" in Plan.objects.get(pk=plan.pk).constraints["guidance"][0]
    assert AuditRecord.objects.filter(action="plan.guidance", target_id=str(plan.pk)).exists()


def test_one_schema_repair_turn(operator):
    bad = FakeReply(tool_calls=[("submit_action_plan", {"actions": "all of them"})])
    good = FakeReply(
        tool_calls=[("submit_action_plan", {"summary": "ok", "actions": [{"type": "answer", "text": "hi"}]})]
    )
    turn = coordinator_turn(user=operator, message="hello", engine=FakeEngine(script=[bad, good]))
    assert turn.repair_turns == 1 and turn.status == "ok" and "hi" in turn.answer
    twice = coordinator_turn(user=operator, message="hello", engine=FakeEngine(script=[bad, bad, good]))
    assert twice.status == "failed" and twice.executed == []
    assert "after one schema-repair turn" in twice.answer and twice.action_plan is None


def test_no_model_answer_says_what_failed(operator):
    turn = coordinator_turn(user=operator, message="hello", engine=FakeEngine(script=[FakeReply(text="no plan")]))
    assert turn.status == "failed" and "could not produce a valid action plan" in turn.answer


def test_unbacked_claims_and_invisible_references_are_flagged(operator, make_user):
    other = build_plan(make_user("otto", OPERATOR), [{"capability": "otest.read_value", "inputs": {"key": "k"}}])
    turn = coordinator_turn(
        user=operator,
        message="did you fix it",
        engine=scripted(
            {"type": "answer", "text": "Yes."},
            summary="I applied the fix.",
            references={"plan_ids": [other.pk], "draft_ids": [3]},
        ),
    )
    failed = {c["check"] for c in turn.validation if not c["ok"]}
    assert failed == {"claim", "reference.plan", "reference.draft"}
    assert "I applied the fix" not in turn.answer and "Yes." in turn.answer


def test_unsupported_actions_are_reported_not_dropped(operator):
    turn = coordinator_turn(
        user=operator,
        message="Research this and have a reviewer check it",
        engine=scripted({"type": "request_approval", "text": "review it"}),
    )
    assert turn.status == "rejected" and "request_approval is not supported yet" in turn.answer


def test_transcript_is_hash_chained(operator):
    for text in ("one", "two", "three"):
        coordinator_turn(user=operator, message=text)
    turns = list(CoordinatorTurn.objects.order_by("id"))
    assert turns[1].previous_hash == turns[0].hash and turns[2].previous_hash == turns[1].hash
    assert transcript_verify() is None
    CoordinatorTurn.objects.filter(pk=turns[1].pk).update(answer="rewritten")
    assert transcript_verify().pk == turns[1].pk


def test_turn_routes_are_owner_scoped(client, operator, make_user):
    client.force_login(operator)
    created = client.post(
        "/api/v1/aria/coordinator/turns", {"message": "What happened?"}, content_type="application/json"
    )
    assert created.status_code == 201 and created.json()["status"] == "ok"
    turn_id = created.json()["id"]
    assert [t["id"] for t in client.get("/api/v1/aria/coordinator/turns").json()] == [turn_id]
    explain = client.get(f"/api/v1/aria/coordinator/turns/{turn_id}/explain").json()
    assert explain["inspected"][:2] == ["list_plans", "list_pending_interactions"]
    assert explain["validation_checks"] and explain["result"]["status"] == "ok"
    client.force_login(make_user("mallory", OPERATOR))
    assert client.get(f"/api/v1/aria/coordinator/turns/{turn_id}").status_code == 404
    assert client.get(f"/api/v1/aria/coordinator/turns/{turn_id}/explain").status_code == 404


def test_no_engine_takes_the_named_no_model_path(operator, monkeypatch):
    from orchestrator.coordinator import service

    start(job_plan(operator))

    def no_engine(*args, **kwargs):
        raise ValueError("Unknown engine 'none'")

    monkeypatch.setattr(service, "get_engine", no_engine)
    turn = coordinator_turn(user=operator, message="Stop that one")
    assert turn.prompt_kind == "no_model" and turn.status == "failed" and turn.executed == []
    assert "No model is available" in turn.answer and "(running)" in turn.answer
    assert Plan.objects.get().status == "running"
    assert transcript_verify() is None


def test_agent_runs_are_a_read_tool(operator):
    from core.capabilities import CapabilityContext, dispatch

    coordinator_turn(user=operator, message="What happened?")
    runs = dispatch("orchestrator.get_agent_runs", {"agent": "coordinator"}, ctx=CapabilityContext(user=operator))
    assert not runs.is_error and runs.content[0]["steps"][0]["tool"] == "list_plans"


def test_delegate_to_specialists_with_dependencies_in_one_plan(operator):
    from tests.workorders import factories as f

    cell = f.make_cell("P-02")
    wo = f.make_work_order(cell, status="detected")
    refs = [f"work_order:{wo.pk}", f"cell:{cell.pk}"]
    turn = coordinator_turn(
        user=operator, message="Research this and have a reviewer check it",
        engine=scripted(
            {"type": "delegate", "profile": "investigator", "goal": "find the root cause", "context_refs": refs,
             "explicit_request": True},
            {"type": "delegate", "profile": "kb_builder", "text": "Does the RCA match the KB?", "context_refs": refs,
             "depends_on": [0], "explicit_request": True},
            {"type": "delegate", "profile": "reviewer", "text": "check it", "explicit_request": True},
        ),
    )  # fmt: skip
    assert [e["type"] for e in turn.executed] == ["delegate", "delegate"]
    assert "cannot delegate to 'reviewer'" in turn.answer
    plan = Plan.objects.get(pk=turn.executed[0]["result"]["plan_id"])
    assert plan.status == "draft" and plan.planner == "given"
    steps = list(plan.steps.all())
    assert [(s.capability, s.depends_on) for s in steps] == [
        ("workorders.start_investigation", []),
        ("workorders.ask_kb_builder", [1]),
    ]
    assert steps[1].inputs == {"cell_id": cell.pk, "question": "Does the RCA match the KB?"}
    # asking again while that plan is open is a duplicate, not a second workstream
    again = coordinator_turn(
        user=operator, message="Research this",
        engine=scripted({"type": "delegate", "profile": "investigator", "goal": "x", "context_refs": refs,
                         "explicit_request": True}),
    )  # fmt: skip
    assert again.status == "rejected" and "duplicate" in again.answer and Plan.objects.count() == 1


def test_use_the_previous_plan_with_a_change(operator):
    previous = build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], status="completed")
    Plan.objects.filter(pk=previous.pk).update(goal="Read the backlog")
    turn = coordinator_turn(user=operator, message="Use the previous plan but change the UI behaviour")
    assert [e["type"] for e in turn.executed] == ["create_plan"] and turn.status == "ok", turn.answer
    new = Plan.objects.get(pk=turn.executed[0]["result"]["plan_id"])
    assert new.status == "draft" and new.goal == "Read the backlog — change the UI behaviour"
    assert Plan.objects.get(pk=previous.pk).status == "completed"


def test_what_happened_after_a_failed_real_investigation(operator, django_capture_on_commit_callbacks):
    from orchestrator.services.jobs import plan_poll
    from tests.workorders import factories as f
    from workorders.models import WorkOrder

    wo = f.make_work_order(f.make_cell("P-02"), status="detected")
    plan = start(
        build_plan(operator, [{"capability": "workorders.start_investigation", "inputs": {"work_order_id": wo.pk}}])
    )
    assert plan.steps.get().status == "waiting_job"
    WorkOrder.objects.filter(pk=wo.pk).update(status="cancelled")  # cancelled before it was analyzed
    with django_capture_on_commit_callbacks(execute=True):
        plan_poll(plan.pk)
    assert Plan.objects.get(pk=plan.pk).status == "failed"
    turn = coordinator_turn(user=operator, message="What happened?")
    assert tools(turn) == ["list_plans", "list_pending_interactions", "get_plan"]
    assert "cancelled before analysis" in turn.answer and turn.executed[0]["type"] == "answer"
