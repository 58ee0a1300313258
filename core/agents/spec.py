"""What an agent is (data: prompt, tools, use case, bounds, finish tool) and what a run returns.

The loop that runs one is core.agents.loop (`run_agent`), which re-exports these names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from core.capabilities import Capability, CapabilityContext, CapabilityResult, Tier
from core.models import AgentRun

FrameCallback = Callable[[dict[str, Any]], None]
# A mutate-tier call the run may not make by itself (build mode under tool_approval=ask): the loop
# hands it to this hook instead of dispatching it; the hook stores it for a person to confirm and
# returns what the model is told.
HoldCall = Callable[[Capability, dict[str, Any], CapabilityContext], CapabilityResult]


@dataclass(frozen=True)
class FinishTool:
    """The tool whose call ends the run; its input, validated, is the run's output.

    `finish_reason` is what agent_end reports when it ends the run: the tool's name unless the
    agent's contract names another (the KB agent's is "answered")."""

    name: str
    description: str
    input: type[BaseModel]
    finish_reason: str = ""

    @property
    def reason(self) -> str:
        return self.finish_reason or self.name


@dataclass
class AgentSpec:
    """An agent is data: prompt, tools, use case, bounds and finish tool."""

    name: str
    system_prompt: str
    tools: list[str] = field(default_factory=list)  # capability names (dotted or tool names)
    use_case: str = "chat"
    max_tier: Tier = Tier.READ
    finish_tool: FinishTool | None = None
    thinking: bool = False
    max_turns: int = 12
    timeout_seconds: float = 120.0
    token_budget: int = 400_000
    max_tool_calls: int = 40
    max_tokens: int = 4096
    prompt_ref: str = "builtin"
    # Targets a human approved (e.g. {"work_order_id": 7}): a mutate-tier call naming one of these
    # arguments must use exactly this value, so an agent cannot write somewhere else.
    pinned_write_args: dict[str, Any] = field(default_factory=dict)
    hold_call: HoldCall | None = None


@dataclass
class AgentResult:
    run: AgentRun
    finish_reason: str  # finish_tool | end_turn | max_turns | timeout | token_budget | max_tool_calls | error
    output: dict[str, Any] | None
    text: str
    messages: list[dict[str, Any]]
    # What agent_end reports (and AgentRun.finish_reason records): the finish tool's reason
    # (e.g. "submit_rca", "answered") when it ended the run, else `finish_reason`.
    end_reason: str = ""
    _end: Callable[[], object] | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.finish_reason in ("finish_tool", "end_turn")

    def publish_end(self) -> None:
        """Publish the deferred agent_end (run_agent(..., defer_end=True)); once, idempotent."""
        end, self._end = self._end, None
        if end is not None:
            end()
