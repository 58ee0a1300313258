"""orchestrator.coordinate: the chat UI's entry point to the coordinator, compact, never an agent's tool."""

import pytest

from core.access import OPERATOR
from core.agents.engines.fake import FakeEngine, FakeReply
from core.capabilities import CapabilityContext, Tier, dispatch, registry
from orchestrator.capabilities import COORDINATE, compact_turn
from orchestrator.coordinator.service import coordinator_turn
from orchestrator.models import CoordinatorTurn, Plan
from tests.orchestrator.conftest import build_plan, start
from tests.workorders import factories as f

pytestmark = pytest.mark.django_db


def coordinate(user, message, conversation="chat-1", agent=""):
    return dispatch(COORDINATE, {"message": message, "conversation": conversation}, ctx=CapabilityContext(user, agent))


def test_it_runs_one_turn_as_the_caller_and_returns_it_compactly(operator):
    cell = f.make_cell("P-02")
    f.ramp(f.make_signal(cell), peak=5.2)
    f.make_work_order(cell, status="detected", title="High vibration on P-02")

    result = coordinate(operator, "What is going on with P-02?")

    assert not result.is_error, result.message
    turn = CoordinatorTurn.objects.get()
    assert (turn.user, turn.conversation, turn.message) == (operator, "chat-1", "What is going on with P-02?")
    out = result.content
    assert out["turn_id"] == turn.pk and out["status"] == turn.status == "ok"
    assert out["answer"] == turn.answer and out["references"] == turn.references
    assert out["tools"] == [c["tool"] for c in turn.tool_calls] and out["tool_calls"] == len(out["tools"]) > 0
    assert "find_cells" in out["tools"]  # the named tag was resolved before answering
    assert [a["type"] for a in out["actions"]] == [a["type"] for a in turn.action_plan["actions"]]
    assert all(a["allowed"] and a["executed"] and a["ok"] for a in out["actions"])
    assert out["plan_ids"] == []  # a question touches no plan
    assert out["explain"] == f"/api/v1/aria/coordinator/turns/{turn.pk}/explain"
    assert result.summary().startswith(f"Coordinator turn {turn.pk} (ok)")


def test_compact_counts_done_and_refused_actions_and_the_plans_touched(operator, make_user):
    mine = start(build_plan(operator, [{"capability": "otest.start_job", "inputs": {"ref": "j"}}]))
    theirs = build_plan(make_user("otto", OPERATOR), [{"capability": "otest.read_value", "inputs": {"key": "k"}}])
    plan = {
        "summary": "Stopping yours.",
        "actions": [
            {"type": "cancel_plan", "plan_id": mine.pk, "user_request_quote": "stop them"},
            {"type": "pause_plan", "plan_id": theirs.pk, "user_request_quote": "stop them"},
        ],
    }
    engine = FakeEngine(script=[FakeReply(tool_calls=[("list_plans", {})]), FakeReply(tool_calls=[("submit_action_plan", plan)])])  # fmt: skip
    turn = coordinator_turn(user=operator, message="stop them", engine=engine)

    out = compact_turn(turn)

    assert out["status"] == "rejected" and out["tools"] == ["list_plans"] and out["tool_calls"] == 1
    done, refused = out["actions"]
    assert done == {
        "index": 0, "type": "cancel_plan", "plan_id": mine.pk, "allowed": True, "reason": "",
        "executed": True, "ok": True, "error": "",
    }  # fmt: skip
    assert refused["type"] == "pause_plan" and refused["plan_id"] == theirs.pk
    assert refused["allowed"] is False and refused["reason"] and refused["executed"] is False and refused["ok"] is None
    assert out["plan_ids"] == [mine.pk]  # only the plan it changed
    assert Plan.objects.get(pk=mine.pk).status == "cancelled" and Plan.objects.get(pk=theirs.pk).status == "approved"


def test_an_approver_only_user_is_refused_and_nothing_is_recorded(approver):
    result = coordinate(approver, "What is going on with P-02?")
    assert result.is_error and result.message == "Permission denied: requires scope operator."
    assert not CoordinatorTurn.objects.exists()


def test_bad_input_is_refused_before_any_turn(operator):
    assert "message" in coordinate(operator, "").message
    assert "message" in coordinate(operator, "x" * 4001).message
    assert "conversation" in coordinate(operator, "hi", conversation="c" * 81).message
    assert not CoordinatorTurn.objects.exists()


def test_agents_plans_and_mcp_clients_may_not_call_it(operator):
    for caller in ("operator_qa", "orchestrator", "mcp"):  # the loop, the plan executor, the MCP server
        result = coordinate(operator, "cancel everything", agent=caller)
        assert result.is_error and "entry point for a person's UI" in result.message
    assert not CoordinatorTurn.objects.exists()


def test_it_is_never_projected_listed_over_mcp_or_planned(operator):
    from core.capabilities import project_tools
    from orchestrator.planning.validation import validate_proposals
    from workorders.mcp_server import visible_capabilities

    cap = registry.get(COORDINATE)
    assert cap.ui_only
    # even an allowlist naming it explicitly does not project it to an agent
    assert project_tools(allow=[COORDINATE], user=operator) == []
    assert cap not in visible_capabilities(operator)
    checked = validate_proposals([{"capability": COORDINATE, "inputs": {"message": "x"}}], context_refs=[])
    assert checked.steps == [] and checked.notes[0]["reason"] == "a UI entry point, not a plan step"


def test_no_agent_allowlist_projects_it():
    from assistant.agents.author import author_tools
    from assistant.agents.qa import qa_tools
    from assistant.conf import AssistantConfig
    from orchestrator.coordinator.context import read_tools
    from orchestrator.coordinator.profiles import PROFILES

    cap = registry.get(COORDINATE)
    assert cap.tier == Tier.MUTATE and cap.scopes == (OPERATOR,) and "chat UI" in cap.description
    allowlists = [author_tools(mode, AssistantConfig()) for mode in ("chat", "build", "plan")]
    allowlists += [qa_tools(), read_tools(), *[list(p.tools) for p in PROFILES.values()]]
    for allow in allowlists:
        assert COORDINATE not in allow and cap.tool_name not in allow
