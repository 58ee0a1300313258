"""Plan templates: published workflows the orchestrator's planner can instantiate by name.

The assistant publishes a workflow either by registering it directly
(`register_plan_template(...)`) or by registering a provider — a callable returning the
currently published templates (e.g. read from its own tables), so every process sees
publications without restarting. The orchestrator only reads through `get_plan_template` /
`all_plan_templates`; neither side imports the other.

A template step is `{"capability", "inputs", "depends_on"?, "quality_gate"?}`. String input
values may hold `{placeholders}` filled from the plan's context refs (e.g. `{work_order_id}`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PlanTemplate:
    name: str
    description: str = ""
    steps: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    source: str = ""  # e.g. "assistant.workflow:12@v3"


_templates: dict[str, PlanTemplate] = {}
_providers: list[Callable[[], Iterable[PlanTemplate]]] = []


def register_plan_template(
    name: str, *, steps: Iterable[dict[str, Any]], description: str = "", source: str = ""
) -> PlanTemplate:
    """Add or replace a template (re-publishing a workflow replaces its template)."""
    template = PlanTemplate(name=name, description=description, steps=tuple(dict(s) for s in steps), source=source)
    _templates[name.lower()] = template
    return template


def unregister_plan_template(name: str) -> None:
    _templates.pop(name.lower(), None)


def register_template_provider(provider: Callable[[], Iterable[PlanTemplate]]) -> None:
    if provider not in _providers:
        _providers.append(provider)


def all_plan_templates() -> list[PlanTemplate]:
    found = dict(_templates)
    for provider in _providers:
        for template in provider():
            found.setdefault(template.name.lower(), template)
    return sorted(found.values(), key=lambda t: t.name)


def get_plan_template(name: str) -> PlanTemplate | None:
    return {t.name.lower(): t for t in all_plan_templates()}.get(name.lower())
