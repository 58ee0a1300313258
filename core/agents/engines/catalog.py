"""What each engine is and which models it uses: `engine_info()` for the /config route, plus the
small provider-neutral helpers the OpenAI and Ollama engines share.

Model names: `model_for(use_case)` (ARIA_MODELS, ARIA_MODEL=opus) names Claude models by
default. A non-Anthropic engine uses that name when it is not a Claude model (so setting
`ARIA_MODEL_CHAT=gpt-4.1` works), else its provider default: `OPENAI_MODELS` /
`OLLAMA_MODELS` dicts in settings when present, else the defaults below.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings

from core.agents.engines.base import USE_CASES, get_engine, model_for, resolve_engine_name

DEFAULT_MODELS: dict[str, dict[str, str]] = {
    "openai": {"extraction": "gpt-4.1-mini", "vision": "gpt-4.1", "reasoning": "gpt-4.1", "chat": "gpt-4.1-mini"},
    "ollama": {"extraction": "llama3.1", "vision": "llama3.2-vision", "reasoning": "llama3.1", "chat": "llama3.1"},
}
_SETTINGS_MODELS = {"openai": "OPENAI_MODELS", "ollama": "OLLAMA_MODELS"}


def provider_model(provider: str, use_case: str, requested: str = "") -> str:
    """The model a provider should run for a use case (`requested` is what the loop asked for)."""
    if provider in ("anthropic", "fake"):
        return requested or model_for(use_case)
    configured = requested or model_for(use_case)
    if configured and not configured.startswith("claude"):
        return configured
    overrides = getattr(settings, _SETTINGS_MODELS.get(provider, ""), None) or {}
    defaults = DEFAULT_MODELS.get(provider, DEFAULT_MODELS["openai"])
    return overrides.get(use_case) or defaults.get(use_case) or defaults["chat"]


def provider_configured(provider: str) -> bool:
    """Whether settings name a real provider for this engine (a key, or a host for Ollama)."""
    if provider == "anthropic":
        return bool(settings.ANTHROPIC_API_KEY)
    if provider == "openai":
        return bool(settings.OPENAI_API_KEY)
    if provider == "ollama":
        return bool(settings.OLLAMA_HOST)
    return False


def engine_info(name: str | None = None) -> dict[str, Any]:
    """Engine name, provider, model per use case, thinking support and whether it is configured.

    `name` defaults to ARIA_ENGINE (auto resolved); an unknown name raises ValueError.
    """
    resolved = resolve_engine_name(name)
    engine = get_engine(resolved)
    provider = engine.provider or resolved
    models = {use_case: provider_model(provider, use_case) for use_case in USE_CASES}
    if provider == "fake":
        models = dict.fromkeys(USE_CASES, "fake")
    return {
        "engine": engine.name or resolved,
        "provider": provider,
        "models": models,
        "reasoning_model": models["reasoning"],
        "supports_thinking": bool(engine.supports_thinking),
        "real_provider": provider != "fake",
        "configured": provider_configured(provider),
    }


def is_real_provider(name: str) -> bool:
    """Whether a recorded engine name (AgentRun.engine) is a real model provider. An engine this
    process does not know is never claimed to be one: its answer is marked as not from a model."""
    try:
        return bool(engine_info(name)["real_provider"])
    except ValueError:
        return False


# --- shared translation helpers (Anthropic shape → function-calling providers) ---------------


def function_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic tool specs `{name, description, input_schema}` → OpenAI/Ollama function tools."""
    out = []
    for tool in tools:
        if tool.get("type") == "function":  # already in function shape
            out.append(tool)
            continue
        function = {
            "name": tool["name"],
            "description": tool.get("description", ""),
            "parameters": tool.get("input_schema") or {"type": "object", "properties": {}},
        }
        out.append({"type": "function", "function": function})
    return out


def block_text(content: Any) -> str:
    """The text of a message content or tool_result content (a string or a list of blocks)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    return json.dumps(content)


def blocks_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content or [])
