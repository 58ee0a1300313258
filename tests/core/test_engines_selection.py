"""Engine selection (ARIA_ENGINE), model_for(use_case) and engine_info() for the /config route."""

import pytest

from core.agents.engines import get_engine, model_for
from core.agents.engines.anthropic_engine import AnthropicEngine, build_params
from core.agents.engines.catalog import engine_info, provider_model
from core.agents.engines.fake import FakeEngine
from core.agents.engines.ollama_engine import OllamaEngine
from core.agents.engines.openai_engine import OpenAIEngine
from core.agents.types import EngineRequest
from tests.fakes.agent_kit import engine_settings

MODELS = {
    "extraction": "claude-haiku-4-5",
    "vision": "claude-sonnet-4-5",
    "reasoning": "claude-sonnet-4-5",
    "chat": "claude-sonnet-4-5",
    "opus": "claude-opus-4-1",
}
NO_PROVIDERS = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "OLLAMA_HOST": "", "ARIA_MODELS": MODELS}


def test_model_for_each_use_case_and_opus_moves_reasoning_only():
    with engine_settings(ARIA_MODEL="", ARIA_MODELS=MODELS):
        assert [model_for(u) for u in ("extraction", "vision", "reasoning", "chat")] == [
            "claude-haiku-4-5",
            "claude-sonnet-4-5",
            "claude-sonnet-4-5",
            "claude-sonnet-4-5",
        ]
    with engine_settings(ARIA_MODEL="opus", ARIA_MODELS=MODELS):
        assert model_for("reasoning") == "claude-opus-4-1"
        assert model_for("chat") == "claude-sonnet-4-5"
        assert engine_info("anthropic")["models"]["reasoning"] == "claude-opus-4-1"
    with pytest.raises(ValueError, match="Unknown use case 'poetry'"):
        model_for("poetry")


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"ANTHROPIC_API_KEY": "sk-ant", "OPENAI_API_KEY": "sk-oa", "OLLAMA_HOST": "http://h"}, AnthropicEngine),
        ({"OPENAI_API_KEY": "sk-oa", "OLLAMA_HOST": "http://h"}, OpenAIEngine),
        ({"OLLAMA_HOST": "http://127.0.0.1:11434"}, OllamaEngine),
        ({}, FakeEngine),
    ],
    ids=["anthropic", "openai", "ollama", "fake"],
)
def test_auto_picks_a_configured_provider_else_fake(env, expected):
    with engine_settings(ARIA_ENGINE="auto", **{**NO_PROVIDERS, **env}):
        assert type(get_engine()) is expected


def test_explicit_engine_name_wins_and_unknown_name_is_a_clear_error():
    with engine_settings(ARIA_ENGINE="fake", ANTHROPIC_API_KEY="sk-ant"):
        assert isinstance(get_engine(), FakeEngine)
        assert isinstance(get_engine("openai"), OpenAIEngine)
    with engine_settings(ARIA_ENGINE="gemini"), pytest.raises(ValueError) as exc:
        get_engine()
    assert "Unknown engine 'gemini'" in str(exc.value)
    for name in ("anthropic", "openai", "ollama", "fake"):
        assert name in str(exc.value)


def test_thinking_params_never_force_a_tool():
    tools = [{"name": "t", "description": "", "input_schema": {"type": "object", "properties": {}}}]
    req = EngineRequest(agent="a", system="s", messages=[], tools=tools, model="m", thinking=True, max_tokens=2000)
    params = build_params(req)
    assert params["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assert params["max_tokens"] > params["thinking"]["budget_tokens"]
    assert params["tool_choice"] == {"type": "auto"}
    with engine_settings(ARIA_THINKING_BUDGET=100):  # below the API minimum
        assert build_params(req)["thinking"]["budget_tokens"] == 1024


def test_provider_models_replace_claude_names_but_honour_configured_ones():
    with engine_settings(ARIA_MODEL="", ARIA_MODELS=MODELS):
        assert provider_model("openai", "reasoning") == "gpt-4.1"
        assert provider_model("ollama", "chat") == "llama3.1"
        assert provider_model("openai", "chat", requested="gpt-5-mini") == "gpt-5-mini"
        assert provider_model("anthropic", "extraction") == "claude-haiku-4-5"
    with engine_settings(ARIA_MODEL="", ARIA_MODELS={**MODELS, "chat": "qwen3:8b"}):
        assert provider_model("ollama", "chat") == "qwen3:8b"
    with engine_settings(OLLAMA_MODELS={"chat": "mistral-nemo"}, ARIA_MODELS=MODELS):
        assert provider_model("ollama", "chat") == "mistral-nemo"


def test_engine_info_reports_what_config_needs():
    with engine_settings(ARIA_ENGINE="auto", ARIA_MODEL="", **{**NO_PROVIDERS, "ANTHROPIC_API_KEY": "sk-ant"}):
        info = engine_info()
    assert info == {
        "engine": "anthropic",
        "provider": "anthropic",
        "models": {
            "extraction": "claude-haiku-4-5",
            "vision": "claude-sonnet-4-5",
            "reasoning": "claude-sonnet-4-5",
            "chat": "claude-sonnet-4-5",
        },
        "reasoning_model": "claude-sonnet-4-5",
        "supports_thinking": True,
        "real_provider": True,
        "configured": True,
    }
    with engine_settings(ARIA_ENGINE="auto", **NO_PROVIDERS):
        fake = engine_info()
        openai = engine_info("openai")
    assert (fake["engine"], fake["real_provider"], fake["configured"]) == ("fake", False, False)
    assert set(fake["models"].values()) == {"fake"}
    assert openai["provider"] == "openai" and openai["supports_thinking"] is False
    assert openai["configured"] is False  # named, but no key: /config can say it is not ready
    assert openai["models"]["chat"] == "gpt-4.1-mini"
    with pytest.raises(ValueError, match="Unknown engine"):
        engine_info("nope")
