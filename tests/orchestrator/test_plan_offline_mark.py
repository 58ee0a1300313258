"""A plan drafted by the model planner records the engine that proposed its steps; the API says
`offline: true` (the session messages' field) when that was the offline demo engine, and not when a
real provider (a local server speaking the Anthropic Messages wire format) planned it or no model ran.
Steps the coordinator delegated, and a copy of a plan, carry the engine that proposed them too."""

import pytest

from orchestrator.coordinator.service import coordinator_turn
from orchestrator.models import Plan
from tests.fakes.agent_kit import engine_settings
from tests.fakes.anthropic_server import AnthropicFakeServer, anthropic_stream, tool_use
from tests.orchestrator.conftest import build_plan, done, say
from tests.orchestrator.test_coordinator import scripted
from tests.workorders import factories as f

pytestmark = pytest.mark.django_db
API = "/api/v1/aria"
SIGNALS = "workorders.get_current_signals"
GOAL = "Show the vibration of P-02"


def draft(client, planner):
    response = client.post(f"{API}/plans", {"goal": GOAL, "planner": planner}, content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()


def test_the_offline_engine_marks_the_plan_it_drafted(client, operator):
    f.make_cell("P-02")
    client.force_login(operator)
    body = draft(client, "model")
    assert body["planner"] == "model" and body["engine"] == "fake" and body["offline"] is True
    assert Plan.objects.get(pk=body["id"]).engine == "fake"
    listed = {p["id"]: p for p in client.get(f"{API}/plans").json()}
    assert listed[body["id"]]["offline"] is True
    assert client.get(f"{API}/plans/{body['id']}").json()["offline"] is True


def test_a_heuristic_plan_ran_no_model_and_is_not_marked(client, operator):
    f.make_cell("P-02")
    client.force_login(operator)
    body = draft(client, "heuristic")
    assert body["engine"] == "" and body["offline"] is False


def test_a_real_provider_plan_is_not_marked(client, operator):
    p02 = f.make_cell("P-02")
    client.force_login(operator)
    steps = [{"capability": SIGNALS, "inputs": {"cell_id": p02.pk}}]
    with (
        AnthropicFakeServer() as server,
        engine_settings(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=server.url, ARIA_ENGINE="anthropic"),
    ):
        server.push(anthropic_stream([tool_use("toolu_1", "submit_plan", {"steps": steps})], stop_reason="tool_use"))
        body = draft(client, "model")
    assert len(server.message_bodies()) == 1  # the provider was asked, once
    assert [s["capability"] for s in body["steps"]] == [SIGNALS]
    assert body["engine"] == "anthropic" and body["offline"] is False


@pytest.mark.parametrize("source_engine", ["fake", ""])
def test_a_copy_of_a_plan_keeps_the_mark_of_whoever_proposed_its_steps(client, operator, source_engine):
    """ "Same as plan N but without step 2", typed to the coordinator: the copy's steps are the
    source's, so it carries the source's engine (and mark), not the blank of given steps."""
    steps = [{"capability": "otest.read_value", "inputs": {"key": k}} for k in "abc"]
    source = build_plan(operator, steps, status="completed")
    Plan.objects.filter(pk=source.pk).update(engine=source_engine)
    turn = say(client, operator, f"Same as plan {source.pk} but without step 2")
    assert done(turn) == [("derive_plan", True)], turn.answer
    copy = client.get(f"{API}/plans/{turn.executed[0]['result']['plan_id']}").json()
    assert copy["derived_from"] == source.pk
    assert copy["engine"] == source_engine and copy["offline"] is (source_engine == "fake")


def test_a_plan_the_offline_coordinator_delegated_is_marked(client, operator):
    """Delegations become one plan whose steps the coordinator's engine proposed: the offline
    engine's are marked, as the model planner's are."""
    cell = f.make_cell("P-02")
    wo = f.make_work_order(cell, status="analyzed")
    delegate = {"type": "delegate", "profile": "work_order_generator", "text": "Write the repair order",
                "context_refs": [f"work_order:{wo.pk}"], "user_request_quote": "Write the repair order"}  # fmt: skip
    turn = coordinator_turn(user=operator, message="Write the repair order", engine=scripted(delegate))
    assert [e["type"] for e in turn.executed] == ["delegate"], turn.answer
    client.force_login(operator)
    plan = client.get(f"{API}/plans/{turn.executed[0]['result']['plan_id']}").json()
    assert plan["engine"] == "fake" and plan["offline"] is True
