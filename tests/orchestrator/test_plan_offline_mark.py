"""A plan drafted by the model planner records the engine that proposed its steps; the API says
`offline: true` (the session messages' field) when that was the offline demo engine, and not when a
real provider (a local server speaking the Anthropic Messages wire format) planned it or no model ran."""

import pytest

from orchestrator.models import Plan
from tests.fakes.agent_kit import engine_settings
from tests.fakes.anthropic_server import AnthropicFakeServer, anthropic_stream, tool_use
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
