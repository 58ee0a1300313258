"""Engine protocol, selection by name (ARIA_ENGINE) and model_for(use_case)."""

from core.agents.engines.base import Engine, get_engine, model_for, register_engine

__all__ = ["Engine", "get_engine", "model_for", "register_engine"]
