"""Structured guidance on a plan that is already planned: "carry on, but only line 2".

A plan's `constraints` may limit it to cells (`cells`: tags) and lines (`lines`: "line 2"); the
planner applies them when it plans (`planning/scope.py`) and the executor applies them to the steps
still to run: a step about a cell outside them (its `cell_id`, or its work order's cell) is skipped
with the reason, never run. Cells are resolved as the plan owner through `workorders.find_cells`
(and `workorders.get_work_order` for a step's work order), as the planner does.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from orchestrator.models import Plan, PlanStep
from orchestrator.planning.cells import exact_cell, read
from orchestrator.planning.scope import FIND_CELLS, resolve_scope

GUIDANCE_KEYS = ("cells", "lines")
GET_WORK_ORDER = "workorders.get_work_order"


def guided(constraints: dict[str, Any]) -> bool:
    return any(constraints.get(key) for key in GUIDANCE_KEYS)


def guidance_problem(user: AbstractBaseUser, constraints: dict[str, Any]) -> str:
    """Why these cell/line limits cannot apply (an unknown key, tag or line), or ""."""
    unknown = sorted(set(constraints) - set(GUIDANCE_KEYS))
    if unknown:
        return f"guidance constraints take {', '.join(GUIDANCE_KEYS)} only, not {', '.join(unknown)}"
    for key in GUIDANCE_KEYS:
        values = constraints.get(key) or []
        if not isinstance(values, list) or len(values) > 20 or not all(isinstance(v, str) and v for v in values):
            return f"constraints.{key} must be a list of up to 20 names"
    for tag in constraints.get("cells") or []:
        found, error = read(user, FIND_CELLS, {"query": tag, "limit": 20})
        if found is None:
            return f"could not look up {tag}: {error}"
        if exact_cell(found.get("cells") or [], tag) is None:
            return f"no cell is tagged {tag}"
    for line in constraints.get("lines") or []:
        if not resolve_scope("", {"lines": [line]}, user).cells:
            return f"no production line matches '{line}'"
    return ""


def allowed_cells(plan: Plan) -> set[int] | None:
    """The cell ids the plan's guidance allows, or None when it names none (everything allowed)."""
    if not guided(plan.constraints):
        return None
    limits = {key: plan.constraints.get(key) or [] for key in GUIDANCE_KEYS}
    return set(resolve_scope("", limits, plan.owner).cell_ids)


def step_cell(plan: Plan, step: PlanStep) -> int | None:
    """The cell a step is about: its `cell_id` input, or its work order's cell (None: not about one)."""
    inputs = step.inputs or {}
    if isinstance(inputs.get("cell_id"), int):
        return inputs["cell_id"]
    if isinstance(inputs.get("work_order_id"), int):
        found, _ = read(plan.owner, GET_WORK_ORDER, {"work_order_id": inputs["work_order_id"]})
        cell = (found or {}).get("cell_id")
        return cell if isinstance(cell, int) else None
    return None


def outside_guidance(plan: Plan, step: PlanStep, allowed: set[int] | None) -> str:
    """Why the guidance rules this step out ("" when it may run)."""
    if allowed is None:
        return ""
    cell = step_cell(plan, step)
    if cell is None or cell in allowed:
        return ""
    limits = ", ".join(str(v) for key in GUIDANCE_KEYS for v in plan.constraints.get(key) or [])
    return f"Skipped by the plan's guidance: only {limits}; this step is about cell {cell}."
