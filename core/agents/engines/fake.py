"""The fake engine: deterministic, offline, and still an agent.

Each agent registers a *policy*: a function that looks at what the run has seen so far (the
request, the tool results returned) and decides the next turn — which tools to call with which
arguments, or the finish tool, or a text answer. So the whole product runs end to end without a
provider, and tests exercise the real loop, tools and services.

    @fake_policy("investigator")
    def investigate(state: FakeState) -> FakeReply:
        if not state.called("get_signal_trends"):
            return FakeReply(tool_calls=[("get_signal_trends", {"cell_id": ...})])
        ...

Policies are offline stand-ins, kept apart from app code: an app declares the package that holds
them on its AppConfig (`offline_policies = "workorders.offline"`), and this engine imports those
packages the first time it needs a policy — so they are imported only when the fake engine runs.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from django.apps import apps

from core.agents.engines.base import Engine, register_engine
from core.agents.types import DeltaCallback, EngineRequest, EngineTurn, Usage


@dataclass
class ToolOutcome:
    name: str
    input: dict[str, Any]
    content: Any  # parsed JSON when the result was JSON, else the text
    is_error: bool


@dataclass
class FakeState:
    request: EngineRequest
    turn: int
    outcomes: list[ToolOutcome]

    @property
    def agent(self) -> str:
        return self.request.agent

    @property
    def tool_names(self) -> set[str]:
        return {t["name"] for t in self.request.tools}

    @property
    def user_text(self) -> str:
        """The latest user message text (not tool results)."""
        for message in reversed(self.request.messages):
            if message["role"] != "user":
                continue
            content = message["content"]
            if isinstance(content, str):
                return content
            texts = [b.get("text", "") for b in content if b.get("type") == "text"]
            if texts:
                return "\n".join(texts)
        return ""

    def called(self, name: str) -> bool:
        return any(o.name == name for o in self.outcomes)

    def result(self, name: str) -> Any:
        """The content of the latest successful call of a tool, or None."""
        for outcome in reversed(self.outcomes):
            if outcome.name == name and not outcome.is_error:
                return outcome.content
        return None


@dataclass
class FakeReply:
    text: str = ""
    thinking: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


Policy = Callable[[FakeState], FakeReply]
_policies: dict[str, Policy] = {}


def fake_policy(agent: str) -> Callable[[Policy], Policy]:
    def decorate(fn: Policy) -> Policy:
        _policies[agent] = fn
        return fn

    return decorate


_loaded_modules: set[str] = set()
_loading = threading.Lock()


def offline_policy_modules() -> list[str]:
    """The packages of offline stand-ins the installed apps declare (`AppConfig.offline_policies`)."""
    return [path for config in apps.get_app_configs() if (path := getattr(config, "offline_policies", None))]


def load_offline_policies() -> dict[str, Policy]:
    """Import every declared offline package once (their `@fake_policy`s register); the policies."""
    with _loading:
        for path in offline_policy_modules():
            if path not in _loaded_modules:
                import_module(path)
                _loaded_modules.add(path)
    return _policies


def default_policy(state: FakeState) -> FakeReply:
    return FakeReply(text=f"(offline fake engine) I received: {state.user_text[:200]}")


def tool_outcomes(messages: list[dict[str, Any]]) -> list[ToolOutcome]:
    """The tool calls in Anthropic-shaped messages paired with their results, in order."""
    uses: dict[str, tuple[str, dict]] = {}
    outcomes: list[ToolOutcome] = []
    for message in messages:
        if isinstance(message["content"], str):
            continue
        for block in message["content"]:
            if block.get("type") == "tool_use":
                uses[block["id"]] = (block["name"], block.get("input") or {})
            elif block.get("type") == "tool_result" and block.get("tool_use_id") in uses:
                name, args = uses[block["tool_use_id"]]
                raw = block.get("content")
                if isinstance(raw, list):
                    raw = "".join(part.get("text", "") for part in raw if isinstance(part, dict))
                try:
                    content = json.loads(raw) if isinstance(raw, str) else raw
                except (TypeError, ValueError):
                    content = raw
                outcomes.append(ToolOutcome(name, args, content, bool(block.get("is_error"))))
    return outcomes


class FakeEngine(Engine):
    name = "fake"
    provider = "fake"
    supports_thinking = True

    def __init__(self, policies: dict[str, Policy] | None = None, script: list[FakeReply] | None = None) -> None:
        self._policies = policies
        self._script = list(script) if script is not None else None

    def complete(self, request: EngineRequest, *, on_delta: DeltaCallback | None = None) -> EngineTurn:
        turn = sum(1 for m in request.messages if m["role"] == "assistant")
        if self._script is not None:
            reply = self._script.pop(0) if self._script else FakeReply(text="(script exhausted)")
        else:
            policies = self._policies or load_offline_policies()
            policy = policies.get(request.agent, default_policy)
            reply = policy(FakeState(request=request, turn=turn, outcomes=tool_outcomes(request.messages)))
        content: list[dict[str, Any]] = []
        if reply.thinking:
            if on_delta:
                on_delta("thinking", reply.thinking)
            content.append({"type": "thinking", "thinking": reply.thinking, "signature": f"fake-sig-{turn}"})
        if reply.text:
            if on_delta:
                for word in _chunks(reply.text):
                    on_delta("text", word)
            content.append({"type": "text", "text": reply.text})
        for index, (name, args) in enumerate(reply.tool_calls):
            content.append({"type": "tool_use", "id": f"fake_{turn}_{index}", "name": name, "input": args})
        stop = "tool_use" if reply.tool_calls else "end_turn"
        words = sum(len(json.dumps(m["content"])) for m in request.messages) // 4
        return EngineTurn(content=content, stop_reason=stop, usage=Usage(words, len(reply.text) // 4 + 1), model="fake")


def _chunks(text: str, size: int = 24) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


@register_engine("fake")
def _build() -> Engine:
    return FakeEngine()
