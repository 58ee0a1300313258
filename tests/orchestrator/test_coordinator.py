"""Coordinator scenarios: the offline model chooses tools from inspected state; the validator decides."""

import pytest

from core.access import OPERATOR
from core.agents.engines.fake import FakeEngine, FakeReply
from orchestrator.coordinator.service import coordinator_turn, transcript_verify
from orchestrator.models import CoordinatorTurn, Interaction, Plan
from orchestrator.services.plans import plan_transition
from tests.orchestrator import testcaps
from tests.orchestrator.conftest import build_plan, scripted, start

pytestmark = pytest.mark.django_db


def job_plan(owner, ref="job-1", **kw):
    return build_plan(owner, [{"capability": "otest.start_job", "inputs": {"ref": ref}}], **kw)


def test_apply_it_on_a_gated_step_stays_human(operator):
    plan = start(build_plan(operator, [{"capability": "otest.release", "inputs": {"label": "x"}}]))
    ask = Interaction.objects.get(plan=plan)
    forced = coordinator_turn(
        user=operator,
        message="Apply it",
        engine=scripted({"type": "decide_approval", "interaction_id": ask.pk, "decision": "approve"}),
    )
    assert forced.status == "rejected" and "gated approval stays human" in forced.answer
    assert Interaction.objects.get(pk=ask.pk).status == "open" and testcaps.CALLS == []


def test_run_it_again_while_it_runs_is_a_duplicate(operator):
    plan = start(job_plan(operator))
    Plan.objects.filter(pk=plan.pk).update(context_refs=[{"type": "work_order", "id": 5}])
    again = {"type": "create_plan", "goal": "other words", "context_refs": ["work_order:5"]}
    again["user_request_quote"] = "run it again"
    turn = coordinator_turn(user=operator, message="Run it again", engine=scripted(again))
    assert turn.status == "rejected" and turn.executed == []
    assert f"plan {plan.pk} (running) already covers this" in turn.answer
    # a new workstream the follow-up did not ask for is only proposed: nothing is created
    follow_up = {"type": "create_plan", "goal": "something new"}
    turn = coordinator_turn(user=operator, message="and then", engine=scripted(follow_up))
    assert turn.executed == [] and "To confirm: draft a plan: something new" in turn.answer
    assert Plan.objects.count() == 1
    # stopping the running plan first in the same action plan frees the work for a new one
    swap = scripted({"type": "cancel_plan", "plan_id": plan.pk, "user_request_quote": "Stop it"}, again)
    turn = coordinator_turn(user=operator, message="Stop it and run it again", engine=swap)
    assert [e["type"] for e in turn.executed] == ["cancel_plan", "create_plan"]
    assert Plan.objects.count() == 2


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


def test_on_failure_it_says_what_it_inspected_and_what_failed(operator):
    plan = start(job_plan(operator))
    script = [
        FakeReply(tool_calls=[("list_plans", {}), ("get_plan", {"plan_id": 999})]),
        FakeReply(text="I am not sure."),  # ends without an action plan
    ]
    turn = coordinator_turn(user=operator, message="what now", engine=FakeEngine(script=script))
    assert turn.status == "failed" and turn.executed == [] and turn.action_plan is None
    assert "nothing was changed" in turn.answer
    assert "What failed: the model stopped (end_turn) without an action plan" in turn.answer
    assert "list_plans({}) → 1 item(s)" in turn.answer
    assert 'get_plan({"plan_id": 999}) → ERROR' in turn.answer
    assert Plan.objects.get(pk=plan.pk).status == "running" and transcript_verify() is None
    # bounded: a model that keeps reading is stopped and says so
    looping = FakeEngine(script=[FakeReply(tool_calls=[("list_plans", {})])] * 20)
    turn = coordinator_turn(user=operator, message="what now", engine=looping)
    assert turn.status == "failed" and "the model stopped (max_turns)" in turn.answer


def test_a_failed_action_is_reported_with_what_was_inspected(operator, monkeypatch):
    from orchestrator.coordinator import execute

    plan = start(job_plan(operator))

    def racing_cancel(**kwargs):
        from core.errors import Conflict

        raise Conflict("Plan moved meanwhile.")

    monkeypatch.setattr(execute, "plan_cancel", racing_cancel)
    cancel = {"type": "cancel_plan", "plan_id": plan.pk, "user_request_quote": "cancel it"}
    turn = coordinator_turn(user=operator, message="Cancel it", engine=scripted(cancel))
    assert (
        turn.answer.startswith("Nothing was cancelled: plan moved meanwhile.")
        and "Inspected: list_plans" in turn.answer
    )
    assert turn.status == "failed"


def test_a_crash_while_executing_is_recorded_not_silent(operator, monkeypatch):
    from orchestrator.coordinator import service

    plan = start(job_plan(operator))

    def crash(action, user):
        raise RuntimeError("database went away")

    monkeypatch.setattr(service, "execute_action", crash)
    pause = {"type": "pause_plan", "plan_id": plan.pk, "user_request_quote": "Pause it"}
    turn = coordinator_turn(user=operator, message="Pause it", engine=scripted(pause))
    assert turn.status == "failed" and turn.executed == [] and "RuntimeError: database went away" in turn.error
    assert "What failed: executing the action plan failed" in turn.answer and "Inspected: list_plans" in turn.answer
    assert Plan.objects.get(pk=plan.pk).status == "running" and transcript_verify() is None


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
    assert failed == {"claim", "reference.plan", "reference.draft", "turn"}
    # an invisible reference blocks the whole turn: not even its answer is given
    assert turn.status == "rejected" and turn.executed == []
    assert "I applied the fix" not in turn.answer and "Yes." not in turn.answer
    assert f"plan {other.pk} not visible" in turn.answer


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
    # the compact, expandable details a chat UI renders under the answer (list, detail and explain)
    listed = client.get("/api/v1/aria/coordinator/turns").json()[0]["details"]
    assert [i["tool"] for i in listed["inspected"]][:1] == ["list_plans"]
    assert listed["actions"] == [
        {"type": "answer", "ok": True, "plan_id": None, "interaction_id": None, "error": ""}
    ] and listed["links"]["explain"].endswith(f"/turns/{turn_id}/explain")
    assert explain["details"] == listed and "is_error" in explain["evidence"][0]
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


def test_delegate_to_generator_and_authoring_assistant_with_dependencies(operator, django_capture_on_commit_callbacks):
    from assistant.models import Draft
    from core.models import AgentRun
    from orchestrator.services.interactions import interaction_answer
    from tests.workorders import factories as f

    cell = f.make_cell("P-02")
    wo = f.make_work_order(cell, status="analyzed")
    refs = [f"work_order:{wo.pk}", f"cell:{cell.pk}"]
    turn = coordinator_turn(
        user=operator, message="Write the repair order, then a skill for it",
        engine=scripted(
            {"type": "delegate", "profile": "work_order_generator", "text": "Write the repair order",
             "context_refs": refs, "user_request_quote": "Write the repair order"},
            {"type": "delegate", "profile": "authoring_assistant", "text": "Create a skill that explains the order",
             "depends_on": [0], "user_request_quote": "then a skill for it"},
            {"type": "delegate", "profile": "janitor", "text": "mop", "user_request_quote": "a skill"},
        ),
    )  # fmt: skip
    assert [e["type"] for e in turn.executed] == ["delegate", "delegate"]
    assert "cannot delegate to 'janitor'" in turn.answer
    plan = Plan.objects.get(pk=turn.executed[0]["result"]["plan_id"])
    steps = list(plan.steps.all())
    # both profiles write, so both run through the mutate-tier writing runner
    assert [(s.capability, s.tier, s.inputs["profile"], s.depends_on) for s in steps] == [
        ("orchestrator.run_writing_specialist", "mutate", "work_order_generator", []),
        ("orchestrator.run_writing_specialist", "mutate", "authoring_assistant", [1]),
    ]
    assert steps[0].inputs["context"] == {"work_order_id": wo.pk, "cell_id": cell.pk}
    plan_transition(plan=plan, to_status="approved", actor=operator)
    plan = start(plan)
    for _ in range(2):  # ask_mutations: each write waits for the owner's permission
        assert plan.status == "paused"
        ask = Interaction.objects.get(plan=plan, status="open")
        with django_capture_on_commit_callbacks(execute=True):
            interaction_answer(interaction=ask, actor=operator, decision="approve")
        plan = Plan.objects.get(pk=plan.pk)
    generator, author = plan.steps.all()
    assert plan.status == "completed", [s.error for s in plan.steps.all()]
    assert generator.result["use_case"] == "reasoning" and generator.result["output"]["title"]
    assert generator.result["tools_used"] == [
        "get_work_order", "get_equipment_kb", "get_shift_assignments", "update_work_order"
    ]  # fmt: skip
    assert author.result["use_case"] == "chat" and author.result["tools_used"] == ["create_draft"]
    draft = Draft.objects.get(pk=author.result["output"]["draft_id"])
    assert draft.owner == operator and draft.type == "skill" and draft.status == "draft"
    assert AgentRun.objects.get(pk=author.result["agent_run_id"]).agent == "draft_author"


def test_run_specialist_enforces_the_profile(operator, monkeypatch):
    from core.agents.engines.fake import FakeReply, FakeState, load_offline_policies
    from core.capabilities import CapabilityContext, dispatch
    from core.models import AgentStep

    ctx = CapabilityContext(user=operator)
    bad = dispatch("orchestrator.run_specialist", {"profile": "investigator", "task": "x"}, ctx=ctx)
    assert bad.is_error and "not an agent profile" in bad.message
    assert dispatch("orchestrator.run_specialist", {"profile": "nobody", "task": "x"}, ctx=ctx).is_error
    # a profile that writes never runs through the safe runner, nor a read-only one through the writing runner
    writer = dispatch("orchestrator.run_specialist", {"profile": "work_order_generator", "task": "x"}, ctx=ctx)
    assert writer.is_error and "run_writing_specialist" in writer.message
    reader = dispatch("orchestrator.run_writing_specialist", {"profile": "reviewer", "task": "x"}, ctx=ctx)
    assert reader.is_error and "does not write" in reader.message

    def greedy(state: FakeState) -> FakeReply:  # a reviewer that reaches for a tool outside its allowlist
        if not state.outcomes:
            return FakeReply(tool_calls=[("update_work_order", {"work_order_id": 1, "title": "x"})])
        return FakeReply(tool_calls=[("submit_review", {"verdict": "pass"})])

    monkeypatch.setitem(load_offline_policies(), "plan_reviewer", greedy)
    out = dispatch("orchestrator.run_specialist", {"profile": "reviewer", "task": "x"}, ctx=ctx)
    assert not out.is_error and out.content["use_case"] == "extraction"
    refused = AgentStep.objects.get(run_id=out.content["agent_run_id"], tool="update_work_order")
    assert refused.is_error


def test_read_tools_for_conversation_events_approvals_and_drafts(operator, approver):
    from core.capabilities import CapabilityContext, dispatch

    ctx = CapabilityContext(user=operator)
    first = coordinator_turn(user=operator, message="one", engine=scripted({"type": "answer", "text": "a"}, read=False))
    events = dispatch("orchestrator.list_conversation_events", {}, ctx=ctx).content
    assert [e["event_id"] for e in events] == [first.pk]
    plan = start(build_plan(operator, [{"capability": "otest.release", "inputs": {"label": "r"}}]))
    mine = dispatch("orchestrator.list_approvals", {}, ctx=ctx).content
    assert mine[0]["plan_id"] == plan.pk and mine[0]["required_scope"] == "approver"
    assert mine[0]["coordinator_approvable"] is False and mine[0]["status"] == "open"
    # Without the assistant's draft capability the coordinator says drafts cannot be read.
    from core.capabilities import registry

    list_drafts = registry.get("assistant.list_drafts")
    registry.unregister("assistant.list_drafts")
    try:
        drafts = dispatch("orchestrator.read_drafts", {}, ctx=ctx)
    finally:
        registry.register(list_drafts)
    assert not drafts.is_error and drafts.content["available"] is False
    assert "assistant.list_drafts" in drafts.content["error"]


def test_drafts_are_read_and_verified_through_the_assistant_capability(operator):
    from pydantic import BaseModel

    from core.access import OPERATOR as OP
    from core.capabilities import CapabilityContext, Tier, capability, dispatch, registry

    class DraftIn(BaseModel):
        draft_id: int

    real_get_draft = registry.get("assistant.get_draft")
    registry.unregister("assistant.get_draft")

    @capability("assistant.get_draft", description="test double", input=DraftIn, tier=Tier.READ, scopes=(OP,))
    def get_draft(ctx, params):
        if params.draft_id != 7:
            raise LookupError("Draft not found.")
        return {"id": 7, "status": "validated", "owner": ctx.user.username}

    try:
        read = dispatch("orchestrator.read_drafts", {"draft_id": 7}, ctx=CapabilityContext(user=operator))
        assert read.content["draft"]["owner"] == operator.username
        turn = coordinator_turn(
            user=operator, message="x",
            engine=scripted({"type": "answer", "text": "a"}, references={"draft_ids": [7, 8]}),
        )  # fmt: skip
    finally:
        registry.unregister("assistant.get_draft")
        registry.register(real_get_draft)
    checks = [(c["ok"], c["reason"]) for c in turn.validation if c["check"] == "reference.draft"]
    assert checks[0] == (True, "") and checks[1][0] is False and "Draft not found" in checks[1][1]


def test_the_context_packet_carries_investigations_in_flight_first(operator, make_user):
    from core.models import AgentRun

    def run(wo, status):
        return AgentRun.objects.create(
            agent="investigator", engine="fake", subject_type="work_order", subject_id=str(wo), status=status
        )

    done, running = run(7, "finished"), run(8, "running")
    AgentRun.objects.create(agent="operator_qa", engine="fake", user=make_user("quinn", OPERATOR))  # not one
    newest = run(9, "failed")
    turn = coordinator_turn(user=operator, message="What happened?")
    rows = [(r["agent_run_id"], r["work_order_id"], r["status"]) for r in turn.context_packet["investigations"]]
    assert rows == [(running.pk, 8, "running"), (newest.pk, 9, "failed"), (done.pk, 7, "finished")]
