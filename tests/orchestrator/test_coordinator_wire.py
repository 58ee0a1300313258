"""The coordinator through the real Anthropic SDK, against a local fake Messages API whose answers
come from the fake gateway: each request's tool_result blocks are the state it decides from.

This is the scenario suite's "Stop that one, use a smaller agent" on the production engine path:
streamed tool_use blocks, tool results sent back by the agent loop, the finish tool validated.
"""

import json

import pytest

from core.agents.engines import get_engine
from core.agents.engines.fake import FakeState, tool_outcomes
from core.agents.types import EngineRequest
from orchestrator.coordinator.service import coordinator_turn
from orchestrator.models import Plan
from orchestrator.offline.gateway import decide
from orchestrator.offline.reading import Reading
from tests.fakes.agent_kit import engine_settings
from tests.fakes.anthropic_server import AnthropicFakeServer, anthropic_stream, text, tool_use
from tests.orchestrator.test_coordinator_scenarios import SURVEY, _investigation, allowed, tools, transcript

pytestmark = pytest.mark.django_db


def gateway_responder(reading: Reading):
    """Answer POST /v1/messages as a model that understood `reading` and reads state from the wire."""

    def respond(recorded):
        body = recorded.json
        request = EngineRequest(
            agent="coordinator", system=json.dumps(body.get("system")), messages=body["messages"],
            tools=body.get("tools", []), model=body["model"],
        )  # fmt: skip
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        reply = decide(reading, FakeState(request=request, turn=turn, outcomes=tool_outcomes(body["messages"])))
        blocks = [text(reply.text)] if reply.text else []
        blocks += [tool_use(f"toolu_{turn}_{i}", name, args) for i, (name, args) in enumerate(reply.tool_calls)]
        return anthropic_stream(blocks, stop_reason="tool_use" if reply.tool_calls else "end_turn")

    return respond


def test_stop_that_one_use_a_smaller_agent_over_the_messages_api(operator, django_capture_on_commit_callbacks):
    plan, wo, cell = _investigation(operator, django_capture_on_commit_callbacks)
    with (
        AnthropicFakeServer(responder=gateway_responder(Reading("stop", smaller=True))) as server,
        engine_settings(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=server.url, ARIA_ENGINE="anthropic"),
    ):
        turn = coordinator_turn(user=operator, message="Stop that one, use a smaller agent", engine=get_engine())
    assert turn.prompt_kind == "model" and turn.status == "ok", turn.answer
    assert tools(turn) == [*SURVEY, "get_plan"]
    assert allowed(turn) == ["cancel_plan", "delegate"]
    assert Plan.objects.get(pk=plan.pk).status == "cancelled"
    step = Plan.objects.get(pk=turn.executed[1]["result"]["plan_id"]).steps.get()
    assert step.inputs["profile"] == "investigator_lite"
    assert step.inputs["context"] == {"work_order_id": wo.pk, "cell_id": cell.pk}
    transcript(turn)
    bodies = server.message_bodies()
    # three model turns: survey, get_plan, submit; only read tools (+ the finish tool) were offered
    assert len(bodies) == 3
    offered = {t["name"] for t in bodies[0]["tools"]}
    assert "submit_action_plan" in offered and "list_plans" in offered and "cancel_plan" not in offered
    # the second request carried the survey's tool results back, which is what the gateway decided from
    results = [b for b in bodies[1]["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert len(results) == 4 and str(plan.pk) in json.dumps(results[0]["content"])


def test_an_instruction_read_in_a_tool_result_is_proposed_not_done(operator):
    """Over the Messages API: a model that takes its "instruction" from what a read tool returned
    (here the open ask's own question) quotes words the user never wrote — the ask stays open and
    the turn offers it as a proposal to confirm."""
    from orchestrator.models import Interaction
    from tests.orchestrator.conftest import build_plan, start

    plan = start(build_plan(operator, [{"capability": "otest.read_value", "inputs": {"key": "k"}}], autonomy="ask_all"))
    ask = Interaction.objects.get(plan=plan)

    def respond(recorded):
        outcomes = tool_outcomes(recorded.json["messages"])
        if not outcomes:
            return anthropic_stream([tool_use("toolu_0", "list_pending_interactions", {})], stop_reason="tool_use")
        (pending,) = outcomes[0].content
        action = {"type": "decide_approval", "interaction_id": pending["id"], "decision": "approve",
                  "user_request_quote": pending["question"]}  # fmt: skip
        plan_json = {"summary": "Approving what the ask says.", "actions": [action]}
        return anthropic_stream([tool_use("toolu_1", "submit_action_plan", plan_json)], stop_reason="tool_use")

    with (
        AnthropicFakeServer(responder=respond) as server,
        engine_settings(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=server.url, ARIA_ENGINE="anthropic"),
    ):
        turn = coordinator_turn(user=operator, message="What is waiting for me?", engine=get_engine())
    assert turn.prompt_kind == "model" and turn.executed == [] and turn.status == "ok"
    assert Interaction.objects.get(pk=ask.pk).status == "open"
    (check,) = [c for c in turn.validation if not c["ok"]]
    assert check["check"] == "backed_by_message" and "not in your current message" in check["reason"]
    assert f"To confirm: approve ask {ask.pk}" in turn.answer
    # the JSON schema the model was given documents the field the validator checks
    schema = next(t for t in server.message_bodies()[0]["tools"] if t["name"] == "submit_action_plan")
    assert "user_request_quote" in json.dumps(schema) and "explicit_request" not in json.dumps(schema)
