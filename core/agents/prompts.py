"""Where an agent's system prompt comes from: a published prompt alias when one exists.

The assistant app (which owns published prompts) registers a source; core never imports it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import Any

logger = logging.getLogger(__name__)

# source(agent_name) -> (prompt text, reference such as "prompt:investigator@v3") or None
PromptSource = Callable[[str], tuple[str, str] | None]
_sources: list[PromptSource] = []

# `{{ name }}`: the syntax published prompts declare their variables in (assistant.validators).
TEMPLATE_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def register_prompt_source(source: PromptSource) -> PromptSource:
    if source not in _sources:
        _sources.append(source)
    return source


def template_variables(text: str) -> set[str]:
    """The `{{name}}` variables a prompt text uses."""
    return set(TEMPLATE_VARIABLE.findall(text))


def fill_prompt_variables(text: str, variables: Mapping[str, Any] | None) -> str:
    """Replace each `{{name}}` whose name is in `variables` (None values count as unknown); an
    unknown variable stays visible as written. Never raises."""
    if not variables:
        return text

    def replace(match: re.Match[str]) -> str:
        value = variables.get(match.group(1))
        return match.group(0) if value is None else str(value)

    return TEMPLATE_VARIABLE.sub(replace, text)


def system_prompt_for(agent: str, default: str, variables: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """The published `production` prompt of this agent if any, else the built-in default, with its
    `{{variables}}` filled from `variables` (the agent's context; unknown ones are left as written)."""
    for source in _sources:
        try:
            found = source(agent)
        except Exception:
            logger.exception("Prompt source failed for %s; using the built-in prompt", agent)
            continue
        if found:
            text, ref = found
            return fill_prompt_variables(text, variables), ref
    return fill_prompt_variables(default, variables), "builtin"
