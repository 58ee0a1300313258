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
from orchestrator.planning.scope import FIND_CELLS, LISTED, on_named_line, resolve_scope

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
    return guidance_unknown(user, constraints)[1]


KNOWN_LISTED = 12  # a refusal lists the plant's tags (or lines) when there are at most this many


def _known(names: list[str], what: str) -> str:
    names = sorted(set(names))
    if not names:
        return f" (there are no {what})"
    return f" ({what}: {', '.join(names)})" if len(names) <= KNOWN_LISTED else ""


def guidance_unknown(user: AbstractBaseUser, constraints: dict[str, Any]) -> tuple[str, str]:
    """(field, why) when `constraints.cells` names a tag no cell has or `constraints.lines` a line
    no cell is on — guidance that would leave the plan's steps out in silence; ("", "") when every
    name is known. Read as `user`: one find_cells listing (the first cells, as the planner reads
    them), and a lookup of its own for a tag beyond a full listing. The message names the known
    tags (or lines) when there are few. The API's plan create and the coordinator's guidance both
    refuse with it."""
    tags = [t for t in constraints.get("cells") or [] if isinstance(t, str)]
    lines = [x for x in constraints.get("lines") or [] if isinstance(x, str)]
    if not tags and not lines:
        return "", ""
    found, error = read(user, FIND_CELLS, {"query": "", "limit": LISTED})
    if found is None:
        return ("constraints.cells" if tags else "constraints.lines"), f"could not list the plant's cells: {error}"
    cells: list[dict[str, Any]] = found.get("cells") or []
    full = len(cells) >= LISTED
    for tag in tags:
        if exact_cell(cells, tag) is not None:
            continue
        if full:  # a bigger plant: this tag may be beyond the listing
            more, error = read(user, FIND_CELLS, {"query": tag, "limit": 20})
            if more is None:
                return "constraints.cells", f"could not look up {tag}: {error}"
            if exact_cell(more.get("cells") or [], tag) is not None:
                continue
        known = "" if full else _known([str(c["tag"]) for c in cells], "cells")
        return "constraints.cells", f"no cell is tagged {tag}{known}"
    for line in lines:
        if not any(on_named_line(c, line) for c in cells):
            return (
                "constraints.lines",
                f"no production line matches '{line}'{_known([str(c.get('line')) for c in cells], 'lines')}",
            )
    return "", ""


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
