"""Planners turn a goal into capability-bound steps with populated inputs.

`Planner.propose(goal=..., context_refs=..., constraints=..., user=...) -> Proposal`; the
proposal's steps are then validated (`planning.validation`) before the plan is shown. Two
implementations: `HeuristicPlanner` (deterministic keyword + context-ref rules, and published
plan templates named in the goal) and `ModelPlanner` (the agent loop with a `submit_plan`
finish tool).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.contrib.auth.models import AbstractBaseUser

from core.errors import InvalidInput
from core.json_types import ROW_ID_MAX
from core.plan_templates import PlanTemplate, all_plan_templates, get_plan_template


@dataclass
class Proposal:
    steps: list[dict[str, Any]]
    template: str = ""
    notes: list[dict[str, Any]] = field(default_factory=list)
    # asks for the owner before the plan can go on: {term, question, options, evidence}
    choices: list[dict[str, Any]] = field(default_factory=list)
    engine: str = ""  # the engine that proposed the steps (its name); "" when no model ran


class Planner(Protocol):
    name: str

    def propose(
        self,
        *,
        goal: str,
        context_refs: list[dict[str, Any]],
        constraints: dict[str, Any],
        user: AbstractBaseUser,
    ) -> Proposal: ...


_REF = re.compile(r"^([a-z_]+)[:#]([0-9]+)$")
_DIGITS = re.compile(r"[0-9]+")
# A numeric id written as a string has at most 18 digits, which always fit a row id; the API's schema
# states the same (orchestrator.schemas), so what it calls valid is what is accepted here.
ID_STRING_DIGITS = 18


def _ref_id(index: int, raw: int | str) -> int | str:
    """A numeric id (an int within a row id's range, or a string of at most 18 ASCII digits) as an
    int; any other string as given."""
    if isinstance(raw, str) and not _DIGITS.fullmatch(raw):
        return raw
    if isinstance(raw, str) and len(raw) > ID_STRING_DIGITS:  # checked before int(): 10,000 digits cost time
        raise InvalidInput(
            f"context_refs[{index}].id must be a row id (at most {ID_STRING_DIGITS} digits).",
            field=f"context_refs.{index}",
        )
    value = int(raw)
    if abs(value) > ROW_ID_MAX:
        raise InvalidInput(
            f"context_refs[{index}].id must be a row id (at most {ROW_ID_MAX}).", field=f"context_refs.{index}"
        )
    return value


def normalize_refs(raw: list[Any]) -> list[dict[str, Any]]:
    """Accept `{"type": "work_order", "id": 7}` or `"work_order:7"`; return the dict form."""
    refs = []
    for index, item in enumerate(raw or []):
        if isinstance(item, str) and (m := _REF.match(item.strip())):
            refs.append({"type": m.group(1), "id": _ref_id(index, m.group(2))})
        elif (
            isinstance(item, dict)
            and isinstance(item.get("type"), str)
            and isinstance(item.get("id"), int | str | float)
            and not isinstance(item.get("id"), bool)  # JSON true/false is not an id
            and not (isinstance(item["id"], float) and not item["id"].is_integer())
        ):
            # 7.0 is the integer 7 to JSON (and to the API's schema); 7.5 is not an id
            raw_id = int(item["id"]) if isinstance(item["id"], float) else item["id"]
            refs.append({"type": item["type"], "id": _ref_id(index, raw_id)})
        else:
            raise InvalidInput(
                f"context_refs[{index}] must be 'type:id' or {{type, id}}.", field=f"context_refs.{index}"
            )
    return refs


def template_named_in(goal: str) -> PlanTemplate | None:
    """A template whose name the goal names (`template:<name>` or the name itself)."""
    m = re.search(r"template[:\s]+([\w.-]+)", goal, re.IGNORECASE)
    if m and (template := get_plan_template(m.group(1))):
        return template
    lowered = goal.lower()
    for template in sorted(all_plan_templates(), key=lambda t: -len(t.name)):
        if re.search(rf"\b{re.escape(template.name.lower())}\b", lowered):
            return template
    return None


def expand_template(template: PlanTemplate, refs: dict[str, Any]) -> list[dict[str, Any]]:
    def fill(value: Any) -> Any:
        if isinstance(value, str):
            m = re.fullmatch(r"\{(\w+)\}", value)
            if m and m.group(1) in refs:
                return refs[m.group(1)]
            return re.sub(r"\{(\w+)\}", lambda mm: str(refs.get(mm.group(1), mm.group(0))), value)
        return value

    return [{**step, "inputs": {k: fill(v) for k, v in (step.get("inputs") or {}).items()}} for step in template.steps]


def get_planner(name: str) -> Planner:
    # cycle: the planners import this package (Planner, PlanProposal); checked, a top import fails
    from orchestrator.planning.heuristic import HeuristicPlanner
    from orchestrator.planning.model import ModelPlanner

    planners = {"heuristic": HeuristicPlanner, "model": ModelPlanner}
    if name not in planners:
        raise InvalidInput(f"Unknown planner {name!r}; use one of {sorted(planners)}.", field="planner")
    return planners[name]()
