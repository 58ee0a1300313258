"""AnthropicEngine with the official SDK against a local server speaking the Messages SSE format."""

import json
import threading

import pytest

from core.agents.engines import anthropic_engine, get_engine, model_for
from core.agents.engines.anthropic_engine import AnthropicEngine
from core.agents.loop import run_agent
from core.agents.types import EngineError, EngineRequest
from core.capabilities import CapabilityContext
from core.models import AgentRun
from tests.fakes.agent_kit import engine_settings, lookup_part_capability, parts_agent
from tests.fakes.anthropic_server import (
    AnthropicFakeServer,
    anthropic_error,
    anthropic_stream,
    anthropic_stream_error,
    redacted,
    text,
    thinking,
    tool_use,
)
from tests.fakes.http import Reply

# Characters that break naive re-encoding: unicode, escapes, quotes, base64 padding.
THINKING_1 = thinking(
    'The operator asks about “P-7”.\nI should look it up — not guess. Quote: "stock" \\ path',
    "EqQBCkYIBxgCKkD9+/sig==Zm9vYmFy/x+ab",
)
REDACTED_1 = redacted("EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP+/==")
TOOL_1 = tool_use("toolu_01A09q90qw90lq917835lq9", "lookup_part", {"part": "P-7"})


@pytest.fixture
def server():
    with (
        AnthropicFakeServer() as srv,
        engine_settings(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=srv.url, ARIA_ENGINE="anthropic"),
    ):
        yield srv


@pytest.fixture
def parts_tool():
    with lookup_part_capability():
        yield


def request(**kw) -> EngineRequest:
    base = {"agent": "t", "system": "You are terse.", "messages": [{"role": "user", "content": "Say hello"}]}
    base.update(kw)
    return EngineRequest(**base)


def test_text_turn_streams_deltas_on_the_callers_thread(server):
    server.push(anthropic_stream([text("Hello from the Messages API, streamed.")], input_tokens=12, output_tokens=9))
    deltas, threads = [], set()

    def on_delta(kind, value):
        deltas.append((kind, value))
        threads.add(threading.get_ident())

    engine = get_engine()
    turn = engine.complete(request(model="claude-sonnet-4-6"), on_delta=on_delta)

    assert isinstance(engine, AnthropicEngine)
    assert turn.text == "Hello from the Messages API, streamed."
    assert len(deltas) > 1 and all(kind == "text" for kind, _ in deltas)
    assert "".join(v for _, v in deltas) == turn.text
    assert threads == {threading.get_ident()}  # never on the background loop thread
    assert turn.stop_reason == "end_turn"
    assert (turn.usage.input_tokens, turn.usage.output_tokens) == (12, 9)
    assert turn.content == [{"type": "text", "text": "Hello from the Messages API, streamed."}]
    sent = server.message_bodies()[0]
    assert sent["stream"] is True
    assert sent["model"] == "claude-sonnet-4-6"
    assert sent["system"] == "You are terse."
    assert "thinking" not in sent and "tool_choice" not in sent
    headers = server.requests[0].headers
    assert "sk-ant-test" in (headers.get("x-api-key", "") + headers.get("authorization", ""))
    assert headers["anthropic-version"]


def test_one_async_client_on_one_background_loop(server):
    server.push(anthropic_stream([text("one")]), anthropic_stream([text("two")]))
    engine = get_engine()
    engine.complete(request())
    client, loop = anthropic_engine._client, anthropic_engine._background_loop()
    engine.complete(request())
    assert anthropic_engine._client is client and anthropic_engine._background_loop() is loop
    assert client.timeout == 60 and client.max_retries == 2
    assert type(client).__name__ == "AsyncAnthropic"


def test_client_is_rebuilt_when_settings_change(server):
    server.push(anthropic_stream([text("one")]))
    get_engine().complete(request())
    first = anthropic_engine._client
    with AnthropicFakeServer() as other, engine_settings(ANTHROPIC_API_KEY="sk-2", ANTHROPIC_BASE_URL=other.url):
        other.push(anthropic_stream([text("two")]))
        assert get_engine().complete(request()).text == "two"
        assert anthropic_engine._client is not first
        assert len(other.requests) == 1 and len(server.requests) == 1


def test_a_failing_delta_consumer_stops_the_turn(server):
    server.push(anthropic_stream([text("a long answer that streams in many pieces")]))

    def on_delta(kind, value):
        raise ConnectionResetError("socket closed")

    with pytest.raises(ConnectionResetError):
        get_engine().complete(request(), on_delta=on_delta)


@pytest.mark.django_db
def test_thinking_blocks_replayed_byte_for_byte_on_the_continuation(server, parts_tool, operator):
    # Given a thinking turn that calls a tool, then a turn that finishes
    server.push(
        anthropic_stream([THINKING_1, REDACTED_1, TOOL_1], stop_reason="tool_use"),
        anthropic_stream(
            [thinking("Stock is 3.", "sig-two"), tool_use("toolu_02", "submit_answer", {"answer": "3 in stock"})],
            stop_reason="tool_use",
        ),
    )
    frames = []

    # When the real loop drives the engine
    result = run_agent(
        parts_agent(thinking=True, use_case="reasoning"),
        messages="How many P-7 bearings do we have?",
        ctx=CapabilityContext(user=operator),
        engine=get_engine(),
        on_frame=frames.append,
    )

    # Then the run finished through the real tool and the finish tool
    assert result.finish_reason == "finish_tool", result.run.error
    assert result.output == {"answer": "3 in stock"}
    assert [s.tool for s in AgentRun.objects.get(pk=result.run.pk).steps.all()] == ["lookup_part", "submit_answer"]
    thought = "".join(f["content"] for f in frames if f["type"] == "thinking_delta")
    assert thought == THINKING_1["thinking"] + "Stock is 3."
    first, continuation = server.message_bodies()
    # Extended thinking on: enabled with a budget, max_tokens above it, tool_choice auto (never forced)
    assert first["thinking"]["type"] == "enabled"
    assert first["thinking"]["budget_tokens"] >= 1024
    assert first["max_tokens"] > first["thinking"]["budget_tokens"]
    assert first.get("tool_choice", {"type": "auto"}) == {"type": "auto"}
    assert continuation.get("tool_choice", {"type": "auto"}) == {"type": "auto"}
    assert first["model"] == model_for("reasoning")
    assert {t["name"] for t in first["tools"]} == {"lookup_part", "submit_answer"}
    # The continuation carries the assistant turn exactly: thinking, redacted_thinking, then tool_use
    assistant = continuation["messages"][1]
    assert assistant == {"role": "assistant", "content": [THINKING_1, REDACTED_1, TOOL_1]}
    assert [b["type"] for b in assistant["content"]] == ["thinking", "redacted_thinking", "tool_use"]
    raw = server.requests[1].raw.decode()
    for value in (THINKING_1["thinking"], THINKING_1["signature"], REDACTED_1["data"]):
        assert json.dumps(value, ensure_ascii=False) in raw or json.dumps(value) in raw
    tool_result = continuation["messages"][2]["content"][0]
    assert tool_result["tool_use_id"] == TOOL_1["id"]
    assert "Bearing 6204" in tool_result["content"]


def test_provider_500_after_retries_is_an_engine_error(server):
    server.push(*[anthropic_error(500, "Internal server error")] * 3)
    with pytest.raises(EngineError, match=r"Anthropic API error 500: api_error: Internal server error"):
        get_engine().complete(request())
    assert len(server.requests) == 3  # the SDK retried twice


def test_auth_error_is_not_retried_and_explains_itself(server):
    server.push(anthropic_error(401, "invalid x-api-key", kind="authentication_error"))
    with pytest.raises(EngineError, match="401: authentication_error: invalid x-api-key"):
        get_engine().complete(request())
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "reply",
    [
        anthropic_stream_error("Overloaded"),
        Reply(status=200, chunks=[b"event: message_start\ndata: {not json\n\n"], content_type="text/event-stream"),
        Reply(status=200, chunks=[b"event: ping\ndata: {}\n\n"], content_type="text/event-stream"),
    ],
    ids=["error-event", "invalid-json", "truncated"],
)
def test_invalid_or_failed_streams_are_engine_errors(server, reply):
    server.push(reply)
    with pytest.raises(EngineError, match="Anthropic"):
        get_engine().complete(request())


@pytest.mark.django_db
def test_provider_error_ends_the_loop_with_finish_reason_error(server, parts_tool, operator):
    server.push(*[anthropic_error(500, "boom")] * 3)
    result = run_agent(parts_agent(), messages="hi", ctx=CapabilityContext(user=operator), engine=get_engine())
    assert result.finish_reason == "error"
    assert "Anthropic API error 500" in AgentRun.objects.get(pk=result.run.pk).error


def test_unreachable_provider_is_an_engine_error():
    with (
        engine_settings(ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL="http://127.0.0.1:9", ARIA_ENGINE="anthropic"),
        pytest.raises(EngineError, match="unreachable"),
    ):
        get_engine().complete(request())


def test_a_stalled_stream_is_cut_off_at_the_runs_deadline(server, parts_tool, operator):
    """The wall timeout bounds a model call in flight, not only the gaps between calls."""
    import time

    stalled = anthropic_stream([text("Let me think about that for a very long time.")])
    stalled.pause_seconds = 10
    server.push(stalled)
    began = time.monotonic()
    result = run_agent(
        parts_agent(timeout_seconds=1), messages="hi", ctx=CapabilityContext(user=operator), engine=get_engine()
    )
    assert result.finish_reason == "timeout" and time.monotonic() - began < 5
    assert "abandoned at the run's deadline" in AgentRun.objects.get(pk=result.run.pk).error
