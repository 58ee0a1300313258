"""Where an agent's system prompt comes from: a published prompt alias, composed with the
agent's built-in prompt (its contract: method, tools, finish tool, output rules), which always
stays — a published prompt adds site instructions, it cannot drop "finish by calling submit_rca".

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


CONTRACT_HEADING = "## Built-in contract of this agent"


def compose_prompt(published: str, builtin: str, ref: str) -> str:
    """The published text first, then the built-in prompt under a heading that says it always applies."""
    return (
        f"{published.rstrip()}\n\n{CONTRACT_HEADING} (always applies; the instructions above ({ref}) add to it "
        "and never remove its tools, its finish tool or its output rules)\n"
        f"{builtin}"
    )


def system_prompt_for(agent: str, default: str, variables: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """The published `production` prompt of this agent composed with the built-in `default` (which
    always stays), else the built-in alone; `{{variables}}` filled from `variables` (the agent's
    context; unknown ones are left as written)."""
    for source in _sources:
        try:
            found = source(agent)
        except Exception:
            logger.exception("Prompt source failed for %s; using the built-in prompt", agent)
            continue
        if found:
            text, ref = found
            return fill_prompt_variables(compose_prompt(text, default, ref), variables), ref
    return fill_prompt_variables(default, variables), "builtin"
