"""Which engine the assistant's agents use: the runtime config's choice, else ARIA_ENGINE."""

from __future__ import annotations

from assistant.conf import AssistantConfig, get_config
from core.agents.engines import Engine, get_engine


def author_engine(config: AssistantConfig | None = None) -> Engine:
    config = config or get_config()
    return get_engine(config.engine or None)


def reviewer_engine(config: AssistantConfig | None = None) -> Engine:
    config = config or get_config()
    return get_engine(config.reviewer_engine or config.engine or None)
