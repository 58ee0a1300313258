"""The model-backed planner: the agent loop looks around with read tools, then `submit_plan`."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from pydantic import BaseModel, Field

from core.agents.engines import get_engine
from core.agents.loop import AgentSpec, FinishTool, run_agent
from core.agents.prompts import system_prompt_for
from core.capabilities import CapabilityContext, Tier, registry
from core.plan_templates import all_plan_templates
from orchestrator.planning import Proposal, expand_template, template_named_in
from orchestrator.planning.fanout import broad_goal, find_objects, step_cap, unplanned_clauses
from orchestrator.planning.heuristic import choice_reads
from orchestrator.planning.scope import Scope, apply_resolved, check_constraints, resolve_scope
from orchestrator.planning.validation import ref_values

DEFAULT_PROMPT = """You are ARIA's planner. Turn the operator's goal into a short plan of steps,
each bound to one capability from the catalogue, with every required input filled in. Use the
read tools to look at the current state first when the goal refers to equipment or work orders.
Order the steps; a step's depends_on lists the indexes (0-based) of earlier steps it needs.
Add a quality_gate {field, op, threshold} only when the goal states a measurable bar.
When the context has `broad.objects` (the members of a set the goal ranges over, e.g. every open
alarm on a line with its work order), plan each object's own steps (investigate a detected order,
then workorders.generate_repair_order depending on it) within `broad.step_cap` steps, and list in
notes every part of the goal you could not plan. Stay within the cells of `scope`.
Finish by calling submit_plan. Never invent capabilities or inputs."""

CONTEXT_MARKER = "PLAN_CONTEXT_JSON:"


class ProposedStep(BaseModel):
    capability: str
    inputs: dict[str, Any] = Field(default_factory=dict)
    depends_on: list[int] = Field(default_factory=list)
    quality_gate: dict[str, Any] | None = None


class SubmitPlan(BaseModel):
    steps: list[ProposedStep] = Field(min_length=1, max_length=50)
    notes: list[str] = Field(default_factory=list, max_length=50)  # what of the goal it could not plan, and why


def _catalogue() -> list[dict[str, Any]]:
    return [
        {"name": c.name, "tier": c.tier.label, "description": c.description, "input": c.input_schema()}
        for c in registry.all()
        if not c.ui_only
    ]


def planner_message(
    goal: str, context_refs: list[dict[str, Any]], constraints: dict[str, Any], extra: dict[str, Any] | None = None
) -> str:
    context = {
        **(extra or {}),
        "goal": goal,
        "context_refs": context_refs,
        "constraints": constraints,
        "templates": [t.name for t in all_plan_templates()],
        "catalogue": _catalogue(),
    }
    return f"Goal: {goal}\n\n{CONTEXT_MARKER}{json.dumps(context)}"


class ModelPlanner:
    name = "model"

    def __init__(self, engine=None) -> None:
        self.engine = engine

    def propose(
        self,
        *,
        goal: str,
        context_refs: list[dict[str, Any]],
        constraints: dict[str, Any],
        user: AbstractBaseUser,
    ) -> Proposal:
        template = template_named_in(goal)
        if template is not None:
            return Proposal(expand_template(template, ref_values(context_refs)), template=template.name)
        check_constraints(constraints)
        goal = apply_resolved(goal, constraints)
        scope = resolve_scope(goal, constraints, user)
        if scope.choices:  # ask the owner first; the model plans once the choice is made
            return Proposal(choice_reads(scope), notes=scope.notes, choices=scope.choices)
        notes = list(scope.notes)
        extra: dict[str, Any] = {"scope": {"cells": scope.cells, "lines": scope.lines}}
        kind, cap = broad_goal(goal, scope), step_cap(constraints)
        if kind:
            objects, found = find_objects(kind, goal, scope, user)
            notes += found + unplanned_clauses(goal)
            extra["broad"] = {"kind": kind, "objects": objects, "cells": scope.cell_ids, "step_cap": cap}
        elif scope.cells and not scope.lines:
            extra["cell_id"] = scope.cells[0]["cell_id"]
        prompt, ref = system_prompt_for("planner", DEFAULT_PROMPT)
        spec = AgentSpec(
            name="planner",
            system_prompt=prompt,
            prompt_ref=ref,
            tools=[c.name for c in registry.all() if c.tier == Tier.READ],
            use_case="reasoning",
            finish_tool=FinishTool("submit_plan", "Submit the plan's steps.", SubmitPlan),
            max_turns=6,
            timeout_seconds=90,
        )
        engine = self.engine or get_engine()  # resolved here: the plan records the engine that answered
        result = run_agent(
            spec,
            messages=planner_message(goal, context_refs, constraints, extra),
            ctx=CapabilityContext(user=user),
            engine=engine,
            subject=("plan_goal", goal[:60]),
        )
        if result.output is None:
            reason = result.run.error or f"planner ended with {result.finish_reason} without submit_plan"
            return Proposal(
                [],
                notes=[*notes, {"index": None, "capability": "", "action": "dropped", "reason": reason}],
                engine=engine.name,
            )
        notes += [
            {"action": "unresolved", "capability": "", "reason": str(n)} for n in result.output.get("notes") or []
        ]
        steps = list(result.output["steps"])
        if scope.named:
            steps, outside = within_scope(steps, scope, extra.get("broad"))
            notes += outside
        if kind and len(steps) > cap:
            notes.append(
                {
                    "action": "capped",
                    "capability": "",
                    "reason": f"step cap {cap}: dropped {len(steps) - cap} proposed step(s)",
                }
            )
            steps = steps[:cap]
        return Proposal(steps, notes=notes, engine=engine.name)


def within_scope(
    steps: list[dict[str, Any]], scope: Scope, broad: dict[str, Any] | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Drop proposed steps on a cell or work order outside the goal's scope (a note each); the
    kept steps' dependencies are renumbered, and a dependency on a dropped step is removed."""
    cells = set(scope.cell_ids)
    orders = {o["work_order_id"] for o in (broad or {}).get("objects", [])}
    kept: list[dict[str, Any]] = []
    position: dict[int, int] = {}
    notes: list[dict[str, Any]] = []
    for index, step in enumerate(steps):
        inputs = step.get("inputs") or {}
        cell, order = inputs.get("cell_id"), inputs.get("work_order_id")
        outside = (cell is not None and cell not in cells) or (
            broad is not None and order is not None and order not in orders
        )
        if outside:
            what = f"cell {cell}" if cell is not None and cell not in cells else f"work order {order}"
            notes.append(
                {
                    "index": index,
                    "capability": step.get("capability", ""),
                    "action": "dropped",
                    "reason": f"{what} is outside the goal's scope",
                }
            )
            continue
        position[index] = len(kept)
        kept.append({**step, "depends_on": [position[d] for d in step.get("depends_on") or [] if d in position]})
    return kept, notes
