"""OllamaEngine with the official client against a local server speaking the /api/chat NDJSON stream."""

import pytest

from core.agents.engines import get_engine
from core.agents.engines.ollama_engine import OllamaEngine, to_ollama_messages
from core.agents.loop import run_agent
from core.agents.types import EngineError, EngineRequest
from core.capabilities import CapabilityContext
from core.models import AgentRun
from tests.fakes.agent_kit import engine_settings, lookup_part_capability, parts_agent
from tests.fakes.http import Reply
from tests.fakes.ollama_server import OllamaFakeServer, ollama_error, ollama_stream, ollama_stream_error


@pytest.fixture
def server():
    with (
        OllamaFakeServer() as srv,
        engine_settings(OLLAMA_HOST=srv.url, ANTHROPIC_API_KEY="", OPENAI_API_KEY="", ARIA_ENGINE="ollama"),
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


def test_text_turn_streams_ndjson_deltas(server):
    server.push(ollama_stream(text="Hello from a local model.", prompt_eval_count=20, eval_count=7))
    deltas = []

    engine = get_engine()
    turn = engine.complete(request(max_tokens=256), on_delta=lambda kind, value: deltas.append((kind, value)))

    assert isinstance(engine, OllamaEngine)
    assert turn.text == "Hello from a local model."
    assert len(deltas) > 1 and "".join(v for _, v in deltas) == turn.text
    assert turn.stop_reason == "end_turn"
    assert (turn.usage.input_tokens, turn.usage.output_tokens) == (20, 7)
    sent = server.chat_bodies()[0]
    assert sent["stream"] is True
    assert sent["model"] == "llama3.1"
    assert sent["options"]["num_predict"] == 256
    assert sent["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello"}]


@pytest.mark.django_db
def test_tool_calls_and_multi_turn_history_through_the_real_loop(server, parts_tool, operator):
    server.push(
        ollama_stream(text="Let me check.", tool_calls=[("lookup_part", {"part": "P-7"})]),
        ollama_stream(tool_calls=[("submit_answer", {"answer": "3 in stock"})]),
    )
    result = run_agent(
        parts_agent(), messages="How many P-7 bearings?", ctx=CapabilityContext(user=operator), engine=get_engine()
    )

    assert result.finish_reason == "finish_tool", result.run.error
    assert result.output == {"answer": "3 in stock"}
    assert [s.tool for s in AgentRun.objects.get(pk=result.run.pk).steps.all()] == ["lookup_part", "submit_answer"]
    tool_use = result.messages[1]["content"][1]
    assert tool_use["type"] == "tool_use" and tool_use["id"].startswith("ollama_")
    first, continuation = server.chat_bodies()
    assert [t["function"]["name"] for t in first["tools"]] == ["lookup_part", "submit_answer"]
    # The full conversation goes as chat messages, not stuffed into the system prompt
    assert continuation["messages"][0] == {"role": "system", "content": "You answer questions about spare parts."}
    assert [m["role"] for m in continuation["messages"]] == ["system", "user", "assistant", "tool"]
    assistant, tool = continuation["messages"][2], continuation["messages"][3]
    assert assistant["content"] == "Let me check."
    assert assistant["tool_calls"] == [{"function": {"name": "lookup_part", "arguments": {"part": "P-7"}}}]
    assert tool["tool_name"] == "lookup_part"
    assert "Bearing 6204" in tool["content"]


def test_history_translation_names_tool_results_and_keeps_user_text():
    history = [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "o1", "name": "lookup_part", "input": {}}]},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "o1",
                    "content": [{"type": "text", "text": "bad"}],
                    "is_error": True,
                },
                {"type": "text", "text": "Try again"},
            ],
        },
    ]
    out = to_ollama_messages("S", history)
    assert out[3] == {"role": "tool", "content": "ERROR: bad", "tool_name": "lookup_part"}
    assert out[4] == {"role": "user", "content": "Try again"}


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (ollama_error(500, "model runner crashed"), "Ollama error 500: model runner crashed"),
        (ollama_error(404, 'model "llama3.1" not found, try pulling it first'), "Ollama error 404: model"),
        (ollama_stream_error("out of memory"), "Ollama error: out of memory"),
        (Reply(status=200, chunks=[b"{not json\n"], content_type="application/x-ndjson"), "invalid response"),
        (Reply(status=200, chunks=[], content_type="application/x-ndjson"), "incomplete"),
    ],
    ids=["500", "404", "stream-error", "invalid-json", "empty"],
)
def test_provider_failures_are_engine_errors(server, reply, message):
    server.push(reply)
    with pytest.raises(EngineError, match=message):
        get_engine().complete(request())


def test_unreachable_host_is_an_engine_error():
    with (
        engine_settings(OLLAMA_HOST="http://127.0.0.1:9", ARIA_ENGINE="ollama"),
        pytest.raises(EngineError, match="unreachable"),
    ):
        get_engine().complete(request())


@pytest.mark.django_db
def test_provider_error_ends_the_loop_with_finish_reason_error(server, parts_tool, operator):
    server.push(ollama_error(500, "boom"))
    result = run_agent(parts_agent(), messages="hi", ctx=CapabilityContext(user=operator), engine=get_engine())
    assert result.finish_reason == "error"
    assert "Ollama error 500: boom" in AgentRun.objects.get(pk=result.run.pk).error
