"""Provider-neutral engine types. Messages and content blocks use the Anthropic Messages shape:

    {"role": "user" | "assistant", "content": str | [block, ...]}
    blocks: {"type": "text", "text"} · {"type": "thinking", "thinking", "signature"}
            · {"type": "redacted_thinking", "data"} · {"type": "tool_use", "id", "name", "input"}
            · {"type": "tool_result", "tool_use_id", "content", "is_error"}

Other providers' engines translate to and from this shape.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# on_delta(kind, text): kind is "text" or "thinking"
DeltaCallback = Callable[[str, str], None]


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass
class EngineRequest:
    agent: str
    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)  # Anthropic tool specs
    model: str = ""
    use_case: str = "chat"
    thinking: bool = False
    max_tokens: int = 4096
    deadline_seconds: float | None = None  # the run's time left: the engine abandons the call after it


@dataclass
class ToolUse:
    id: str
    name: str
    input: dict[str, Any]


@dataclass
class EngineTurn:
    """One assistant turn: the full content blocks (thinking blocks verbatim), stop reason, usage."""

    content: list[dict[str, Any]]
    stop_reason: str = "end_turn"  # end_turn | tool_use | max_tokens
    usage: Usage = field(default_factory=Usage)
    model: str = ""

    @property
    def text(self) -> str:
        return "".join(b.get("text", "") for b in self.content if b.get("type") == "text")

    @property
    def tool_uses(self) -> list[ToolUse]:
        return [
            ToolUse(id=b["id"], name=b["name"], input=b.get("input") or {})
            for b in self.content
            if b.get("type") == "tool_use"
        ]


class EngineError(Exception):
    """A provider failed (network, auth, bad response). The loop records it as the run's error."""
