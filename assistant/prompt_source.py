"""Agents load their system prompt from the `production` alias when one is published; workflows
are served as plan templates. Both are read from the tables, so every process sees publications."""

from __future__ import annotations

from assistant.models import PromptAlias
from assistant.publishers import workflow_templates
from core.agents.prompts import register_prompt_source
from core.plan_templates import register_template_provider


def production_prompt(agent: str) -> tuple[str, str] | None:
    alias = PromptAlias.objects.select_related("version").filter(name=agent, alias="production").first()
    if alias is None:
        return None
    return alias.version.text, f"prompt:{agent}@v{alias.version.version}"


register_prompt_source(production_prompt)
register_template_provider(lambda: list(workflow_templates()))
