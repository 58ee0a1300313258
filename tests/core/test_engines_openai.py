"""OpenAIEngine with the official SDK against a local server speaking chat.completion.chunk SSE."""

import pytest

from core.agents.engines import get_engine
from core.agents.engines.openai_engine import OpenAIEngine, to_openai_messages
from core.agents.loop import run_agent
from core.agents.types import EngineError, EngineRequest
from core.capabilities import CapabilityContext
from core.models import AgentRun
from tests.fakes.agent_kit import engine_settings, lookup_part_capability, parts_agent
from tests.fakes.http import Reply
from tests.fakes.openai_server import OpenAIFakeServer, openai_error, openai_stream


@pytest.fixture
def server():
    with (
        OpenAIFakeServer() as srv,
        engine_settings(OPENAI_API_KEY="sk-openai-test", OPENAI_BASE_URL=srv.url + "/v1", ARIA_ENGINE="openai"),
    ):
        yield srv


@pytest.fixture
def parts_tool():
    with lookup_part_capability():
        yield


def request(**kw) -> EngineRequest:
    base = {"agent": "t", "system": "Be brief.", "messages": [{"role": "user", "content": "Say hello"}]}
    base.update(kw)
    return EngineRequest(**base)


def test_text_turn_streams_deltas(server):
    server.push(openai_stream(text="Hello from chat completions.", prompt_tokens=11, completion_tokens=6))
    deltas = []

    engine = get_engine()
    turn = engine.complete(request(use_case="chat"), on_delta=lambda kind, value: deltas.append((kind, value)))

    assert isinstance(engine, OpenAIEngine) and engine.supports_thinking is False
    assert turn.text == "Hello from chat completions."
    assert len(deltas) > 1 and "".join(v for _, v in deltas) == turn.text
    assert turn.stop_reason == "end_turn"
    assert (turn.usage.input_tokens, turn.usage.output_tokens) == (11, 6)
    sent = server.chat_bodies()[0]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert sent["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello"}]
    assert sent["model"] == "gpt-4.1-mini"  # the Claude default is replaced by the provider default
    assert server.requests[0].headers["authorization"] == "Bearer sk-openai-test"


def test_parallel_tool_call_deltas_are_accumulated_by_index(server):
    server.push(
        openai_stream(
            text="Checking.",
            tool_calls=[("call_a", "lookup_part", {"part": "P-7"}), ("call_b", "lookup_part", {"part": "P-9"})],
        )
    )
    turn = get_engine().complete(request())
    assert turn.stop_reason == "tool_use"
    assert turn.content == [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "call_a", "name": "lookup_part", "input": {"part": "P-7"}},
        {"type": "tool_use", "id": "call_b", "name": "lookup_part", "input": {"part": "P-9"}},
    ]


@pytest.mark.django_db
def test_tool_use_and_continuation_through_the_real_loop(server, parts_tool, operator):
    server.push(
        openai_stream(tool_calls=[("call_1", "lookup_part", {"part": "P-7"})]),
        openai_stream(tool_calls=[("call_2", "submit_answer", {"answer": "3 in stock"})]),
    )
    frames = []
    result = run_agent(
        parts_agent(thinking=True),  # thinking is asked for but the engine does not support it
        messages="How many P-7 bearings?",
        ctx=CapabilityContext(user=operator),
        engine=get_engine(),
        on_frame=frames.append,
    )

    assert result.finish_reason == "finish_tool", result.run.error
    assert result.output == {"answer": "3 in stock"}
    assert [s.tool for s in AgentRun.objects.get(pk=result.run.pk).steps.all()] == ["lookup_part", "submit_answer"]
    first, continuation = server.chat_bodies()
    assert [t["function"]["name"] for t in first["tools"]] == ["lookup_part", "submit_answer"]
    assert first["tools"][0]["type"] == "function"
    assert first["tools"][0]["function"]["parameters"]["required"] == ["part"]
    assert first["tool_choice"] == "auto"
    messages = continuation["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[2]["tool_calls"] == [
        {"id": "call_1", "type": "function", "function": {"name": "lookup_part", "arguments": '{"part": "P-7"}'}}
    ]
    assert messages[3]["tool_call_id"] == "call_1"
    assert "Bearing 6204" in messages[3]["content"]
    assert {"type": "tool_call", "name": "lookup_part", "args": {"part": "P-7"}} in frames


def test_history_translation_drops_thinking_and_orders_tool_messages_first():
    history = [
        {"role": "user", "content": "Q"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "t", "signature": "s"},
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "x1", "name": "lookup_part", "input": {"part": "P-7"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "x1", "content": "nope", "is_error": True},
                {"type": "text", "text": "And P-9?"},
            ],
        },
    ]
    out = to_openai_messages("", history)
    assert out[1]["content"] == "Looking." and "thinking" not in str(out[1])
    assert out[2] == {"role": "tool", "tool_call_id": "x1", "content": "ERROR: nope"}
    assert out[3] == {"role": "user", "content": "And P-9?"}


def test_server_error_after_retries_is_an_engine_error(server):
    server.push(*[openai_error(500, "The server had an error")] * 3)
    with pytest.raises(EngineError, match="OpenAI API error 500: The server had an error"):
        get_engine().complete(request())
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    "reply",
    [
        Reply(status=200, chunks=[b"data: {broken\n\n"], content_type="text/event-stream"),
        Reply(status=200, chunks=[b"data: [DONE]\n\n"], content_type="text/event-stream"),
    ],
    ids=["invalid-json", "no-finish"],
)
def test_invalid_streams_are_engine_errors(server, reply):
    server.push(reply)
    with pytest.raises(EngineError, match="OpenAI"):
        get_engine().complete(request())


@pytest.mark.django_db
def test_provider_error_ends_the_loop_with_finish_reason_error(server, parts_tool, operator):
    server.push(openai_error(400, "Invalid schema for function", kind="invalid_request_error"))
    result = run_agent(parts_agent(), messages="hi", ctx=CapabilityContext(user=operator), engine=get_engine())
    assert result.finish_reason == "error"
    assert "OpenAI API error 400: Invalid schema" in AgentRun.objects.get(pk=result.run.pk).error


def test_a_stalled_stream_is_cut_off_at_the_runs_deadline(server, parts_tool, operator):
    import time

    stalled = openai_stream(text="Thinking it over slowly, one word at a time, for minutes.")
    stalled.pause_seconds = 0.6  # each chunk within the read timeout; the ~14-chunk stream takes ~8 s
    server.push(stalled)
    began = time.monotonic()
    result = run_agent(
        parts_agent(timeout_seconds=1), messages="hi", ctx=CapabilityContext(user=operator), engine=get_engine()
    )
    assert result.finish_reason == "timeout" and time.monotonic() - began < 5
