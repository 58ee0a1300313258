"""Where an agent's system prompt comes from: a published prompt alias when one exists.

The assistant app (which owns published prompts) registers a source; core never imports it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

logger = logging.getLogger(__name__)

# source(agent_name) -> (prompt text, reference such as "prompt:investigator@v3") or None
PromptSource = Callable[[str], tuple[str, str] | None]
_sources: list[PromptSource] = []


def register_prompt_source(source: PromptSource) -> PromptSource:
    if source not in _sources:
        _sources.append(source)
    return source


def system_prompt_for(agent: str, default: str) -> tuple[str, str]:
    """The published `production` prompt of this agent if any, else the built-in default."""
    for source in _sources:
        try:
            found = source(agent)
        except Exception:
            logger.exception("Prompt source failed for %s; using the built-in prompt", agent)
            continue
        if found:
            return found
    return default, "builtin"
