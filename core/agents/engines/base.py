from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable

from django.conf import settings

from core.agents.types import DeltaCallback, EngineRequest, EngineTurn

USE_CASES = ("extraction", "vision", "reasoning", "chat")


class Engine(ABC):
    """One model provider. `complete` runs one assistant turn, streaming deltas to on_delta."""

    name: str = ""
    provider: str = ""
    supports_thinking: bool = False

    @abstractmethod
    def complete(self, request: EngineRequest, *, on_delta: DeltaCallback | None = None) -> EngineTurn: ...


def past_deadline(request: EngineRequest) -> Callable[[], bool]:
    """A check a streaming engine calls between chunks: has the run's time for this call run out?"""
    if request.deadline_seconds is None:
        return lambda: False
    ends = time.monotonic() + request.deadline_seconds
    return lambda: time.monotonic() > ends


_factories: dict[str, Callable[[], Engine]] = {}
_instances: dict[str, Engine] = {}
_lock = threading.Lock()


def register_engine(name: str) -> Callable[[Callable[[], Engine]], Callable[[], Engine]]:
    def decorate(factory: Callable[[], Engine]) -> Callable[[], Engine]:
        _factories[name] = factory
        return factory

    return decorate


def resolve_engine_name(name: str | None = None) -> str:
    """ARIA_ENGINE=auto picks a provider whose key is configured, else the fake engine."""
    name = (name or settings.ARIA_ENGINE or "auto").lower()
    if name != "auto":
        return name
    if settings.ANTHROPIC_API_KEY:
        return "anthropic"
    if settings.OPENAI_API_KEY:
        return "openai"
    if settings.OLLAMA_HOST:
        return "ollama"
    return "fake"


def get_engine(name: str | None = None) -> Engine:
    from core.agents.engines import fake  # noqa: F401  (registers itself)

    _load_provider_engines()
    resolved = resolve_engine_name(name)
    with _lock:
        if resolved not in _instances:
            factory = _factories.get(resolved)
            if factory is None:
                raise ValueError(f"Unknown engine {resolved!r}; choose one of {sorted(_factories)}.")
            _instances[resolved] = factory()
        return _instances[resolved]


def reset_engines() -> None:
    """Forget built engines so the next get_engine() rebuilds them from current settings."""
    with _lock:
        _instances.clear()


def _load_provider_engines() -> None:
    from importlib import import_module  # importlib: provider engines are optional modules, found at first use
    from importlib.util import find_spec

    for module in ("anthropic", "openai", "ollama"):
        if find_spec(f"core.agents.engines.{module}_engine"):
            import_module(f"core.agents.engines.{module}_engine")


def model_for(use_case: str) -> str:
    """The model name for a use case; ARIA_MODEL=opus moves reasoning to the Opus model."""
    if use_case not in USE_CASES:
        raise ValueError(f"Unknown use case {use_case!r}; choose one of {USE_CASES}.")
    if use_case == "reasoning" and settings.ARIA_MODEL == "opus":
        return settings.ARIA_MODELS["opus"]
    return settings.ARIA_MODELS[use_case]
