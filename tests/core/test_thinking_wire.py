"""Live `thinking_delta` on the bus, end to end: the official anthropic SDK against the fake
Messages API streams extended thinking in many deltas; the real agent loop publishes them as
bus events {agent, content, turn_id} while the model is still thinking, coalesced to at most
10 events per second per run.

Time is simulated, never measured: the loop's thinking stream is given a clock on which every
provider delta takes `STEP` seconds (the same `ThinkingStream`, only its clock injected), so the
counts below are exact whatever the machine's speed.
"""

from __future__ import annotations

import math
from functools import partial

import pytest

from core.agents import loop
from core.agents.engines import get_engine
from core.agents.thinking import MAX_EVENTS_PER_SECOND, ThinkingStream
from core.capabilities import CapabilityContext
from core.models import Event
from tests.fakes.agent_kit import engine_settings, lookup_part_capability, parts_agent
from tests.fakes.anthropic_server import AnthropicFakeServer, anthropic_stream, thinking, tool_use

pytestmark = pytest.mark.django_db

STEP = 0.02  # simulated seconds between two provider deltas (50 deltas/s: five times the bus rate)
PIECE = 9  # the fake server streams thinking in pieces of 9 characters
FIRST = "".join(f"Bearing temperature reading {i:02d} rises with vibration. " for i in range(30))
SECOND = "Stock of P-7 is 3, enough for the repair; answer now."


class SimulatedClock:
    """Advances `STEP` each time the stream reads it (once per delta); sleeping advances it too."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        self.now += STEP
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def server():
    with (
        AnthropicFakeServer() as srv,
        engine_settings(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=srv.url, ARIA_ENGINE="anthropic"),
        lookup_part_capability(),
    ):
        yield srv


def thinking_events() -> list[Event]:
    return list(Event.objects.filter(type="thinking_delta").order_by("id"))


def test_thinking_streams_on_the_bus_in_several_coalesced_events_before_the_turn_ends(server, operator, monkeypatch):
    # Given a model that thinks at length (many deltas), calls a tool, then thinks briefly and finishes
    server.push(
        anthropic_stream(
            [thinking(FIRST, "sig-1"), tool_use("toolu_1", "lookup_part", {"part": "P-7"})], stop_reason="tool_use"
        ),
        anthropic_stream(
            [thinking(SECOND, "sig-2"), tool_use("toolu_2", "submit_answer", {"answer": "3 in stock"})],
            stop_reason="tool_use",
        ),
    )
    clock = SimulatedClock()
    monkeypatch.setattr(loop, "ThinkingStream", partial(ThinkingStream, clock=clock, sleep=clock.sleep))
    on_the_bus_while_streaming: list[int] = []

    def on_frame(frame: dict) -> None:
        if frame["type"] == "thinking_delta":  # the chat socket's delta: how many bus events exist by now
            on_the_bus_while_streaming.append(Event.objects.filter(type="thinking_delta").count())

    # When the real loop drives the real engine (official SDK) over the wire
    result = loop.run_agent(
        parts_agent(thinking=True, use_case="reasoning"),
        messages="How many P-7 bearings do we have?",
        ctx=CapabilityContext(user=operator),
        engine=get_engine(),
        on_frame=on_frame,
    )
    assert result.finish_reason == "finish_tool", result.run.error

    # Then every provider delta reached the chat socket, and the bus carries the same thinking
    first_deltas, second_deltas = math.ceil(len(FIRST) / PIECE), math.ceil(len(SECOND) / PIECE)
    assert len(on_the_bus_while_streaming) == first_deltas + second_deltas
    events = thinking_events()
    assert "".join(e.payload["content"] for e in events) == FIRST + SECOND
    turn_id = result.run.turn_id
    assert all(
        e.payload == {"agent": "parts_clerk", "content": e.payload["content"], "turn_id": turn_id} for e in events
    )
    assert all(set(e.payload) == {"agent", "content", "turn_id"} for e in events)

    # live: several events were on the bus while the first turn was still streaming
    during_first = on_the_bus_while_streaming[first_deltas - 1]
    assert during_first >= 5, on_the_bus_while_streaming
    # coalesced: never more than 10 per simulated second of thinking (plus the end-of-turn flushes)
    first_seconds = first_deltas * STEP
    assert during_first <= math.ceil(first_seconds * MAX_EVENTS_PER_SECOND) + 1
    assert len(events) < first_deltas + second_deltas  # many deltas, fewer events

    # each turn's thinking is on the bus before the tool calls it led to and before the run ends
    order = list(Event.objects.filter(turn_id=turn_id).order_by("id").values_list("type", "payload"))
    types = [kind for kind, _ in order]
    first_tool = types.index("tool_call_started")
    assert "thinking_delta" in types[:first_tool]
    thought_before_tool = "".join(p["content"] for kind, p in order[:first_tool] if kind == "thinking_delta")
    assert thought_before_tool == FIRST
    assert types[-1] == "agent_end" and max(i for i, t in enumerate(types) if t == "thinking_delta") < len(types) - 1
