"""A real test capability and agent spec for driving provider engines through the real loop."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.test import override_settings
from pydantic import BaseModel

from core.access import OPERATOR
from core.agents.engines.base import reset_engines
from core.agents.loop import AgentSpec, FinishTool
from core.capabilities import Tier, capability, registry

PARTS = {"P-7": {"part": "P-7", "name": "Bearing 6204", "stock": 3, "summary": "Bearing 6204, 3 in stock"}}


class LookupPartInput(BaseModel):
    part: str


class Answer(BaseModel):
    answer: str


@contextmanager
def lookup_part_capability() -> Iterator[None]:
    """Registers `enginekit.lookup_part` (tool name `lookup_part`) for the duration."""

    @capability(
        "enginekit.lookup_part",
        description="Look up a spare part by its number.",
        input=LookupPartInput,
        tier=Tier.READ,
        scopes=(OPERATOR,),
    )
    def lookup_part(ctx, params: LookupPartInput) -> dict:
        return PARTS.get(params.part) or {"error": "unknown part"}

    try:
        yield
    finally:
        registry.unregister("enginekit.lookup_part")


def parts_agent(**overrides) -> AgentSpec:
    kwargs = {
        "name": "parts_clerk",
        "system_prompt": "You answer questions about spare parts.",
        "tools": ["lookup_part"],
        "use_case": "chat",
        "finish_tool": FinishTool("submit_answer", "Give the final answer.", Answer),
        "max_turns": 4,
        "timeout_seconds": 30,
    }
    kwargs.update(overrides)
    return AgentSpec(**kwargs)


@contextmanager
def engine_settings(**settings) -> Iterator[None]:
    """override_settings that also rebuilds the engines on entry and exit."""
    with override_settings(**settings):
        reset_engines()
        try:
            yield
        finally:
            reset_engines()
    reset_engines()
