"""The deterministic planner: goal keywords + context refs → capability-bound steps.

The goal's scope comes first (`planning.scope`: tags, "line 1", the plan's `constraints`); an
ambiguous tag returns a `choice` for the owner instead of guessing, a goal over a set ("all open
alarms on line 1 …", "every detected work order on P-02") fans out per object (`planning.fanout`),
and a plain goal about a line is planned for each of its cells.

A template named in the goal wins. Otherwise each rule below contributes steps when its
keywords appear in the goal or its ref type is in the context; inputs are filled from the refs
(`work_order:7` → `work_order_id=7`). Equipment tags in the goal (P-02, CV-03) are resolved to cells
through `workorders.find_cells` (as the plan owner); an "investigate" goal on a cell investigates
its newest detected work order, or — with none — reads the cell (current signals, trends, failure
history). A goal that moves an alarm limit ("Raise the P-02 vibration alert limit to 4.8 mm/s
because …") adds the gated `sentinel.change_signal_limits` after the cell's signal read
(`planning.limits`). Capabilities that are not registered are proposed anyway
and dropped by validation with a recorded reason, so the plan says what it could not do.
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from orchestrator.planning import Proposal, expand_template, template_named_in
from orchestrator.planning.cells import read
from orchestrator.planning.fanout import broad_goal, plan_broad, step_cap, unplanned_clauses
from orchestrator.planning.limits import add_limit_change, is_limit_change
from orchestrator.planning.scope import FIND_CELLS, Scope, apply_resolved, check_constraints, resolve_scope
from orchestrator.planning.validation import ref_values

INVESTIGATE = re.compile(r"\b(investigat\w*|root[- ]cause|rca|diagnos\w*|why)\b", re.IGNORECASE)
SIGNALS = re.compile(r"\b(signals?|trends?|readings?|vibration|temperature|pressure)\b", re.IGNORECASE)
BACKLOG = re.compile(r"\b(work orders|backlog|open orders)\b", re.IGNORECASE)


def heuristic_steps(
    goal: str, context_refs: list[dict[str, Any]], resolved: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """`resolved` adds ids found from the goal's text (`cell_id`, `work_order_id`); refs win."""
    refs = {**(resolved or {}), **ref_values(context_refs)}
    steps: list[dict[str, Any]] = []

    def add(capability: str, inputs: dict[str, Any], depends_on: list[int] | None = None, **extra: Any) -> int:
        steps.append({"capability": capability, "inputs": inputs, "depends_on": depends_on or [], **extra})
        return len(steps) - 1

    if "work_order_id" in refs:
        wo = refs["work_order_id"]
        look = add("workorders.get_work_order", {"work_order_id": wo})
        if INVESTIGATE.search(goal):
            started = add("workorders.start_investigation", {"work_order_id": wo}, [look])
            add("workorders.get_work_order", {"work_order_id": wo}, [started])
    if "cell_id" in refs or SIGNALS.search(goal):
        add("workorders.get_current_signals", {"cell_id": refs["cell_id"]} if "cell_id" in refs else {})
    if "cell_id" in refs and "work_order_id" not in refs and INVESTIGATE.search(goal):
        add("workorders.get_signal_trends", {"cell_id": refs["cell_id"]})
        add("workorders.get_failure_history", {"cell_id": refs["cell_id"]})
    if BACKLOG.search(goal) or not steps:
        add("workorders.get_work_orders", {})
    return steps


class HeuristicPlanner:
    name = "heuristic"

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
        refs = ref_values(context_refs)
        check_constraints(constraints)
        goal = apply_resolved(goal, constraints)
        scope = resolve_scope(goal, constraints, user)
        if scope.choices:  # ask first: the steps are planned again once the owner picked
            return Proposal(choice_reads(scope), notes=scope.notes, choices=scope.choices)
        kind = broad_goal(goal, scope)
        if kind:
            steps, notes = plan_broad(kind, goal, scope, constraints, user)
            return Proposal(steps, notes=scope.notes + notes)
        if scope.lines and "cell_id" not in refs:
            steps, notes = per_cell_steps(goal, context_refs, scope, step_cap(constraints))
            return Proposal(steps, notes=scope.notes + notes + unplanned_clauses(goal))
        resolved, notes = resolve_goal_cell(goal, refs, scope, user)
        steps = heuristic_steps(goal, context_refs, resolved)
        if is_limit_change(goal):
            notes += add_limit_change(goal, steps, {**resolved, **refs}, user)
        return Proposal(steps, notes=notes + unplanned_clauses(goal))


def choice_reads(scope: Scope) -> list[dict[str, Any]]:
    """While a choice is open the draft only looks at the candidates (nothing else is planned)."""
    return [
        {"capability": FIND_CELLS, "inputs": {"query": c["term"].replace("the ", "")}, "depends_on": []}
        for c in scope.choices
    ]


def per_cell_steps(
    goal: str, context_refs: list[dict[str, Any]], scope: Scope, cap: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A goal about a line that is not a set of alarms/orders: the goal's steps for each of its cells."""
    steps: list[dict[str, Any]] = []
    left_out: list[str] = []
    for cell in scope.cells:
        mine = heuristic_steps(goal, context_refs, {"cell_id": cell["cell_id"]})
        if len(steps) + len(mine) > cap:
            left_out.append(str(cell["tag"]))
            continue
        base = len(steps)
        steps += [{**s, "depends_on": [base + d for d in s["depends_on"]]} for s in mine]
    notes = []
    if left_out:
        notes.append(
            {"action": "capped", "capability": "", "reason": f"step cap {cap} reached: left out {', '.join(left_out)}"}
        )
    return steps, notes


def resolve_goal_cell(
    goal: str, refs: dict[str, Any], scope: Scope, user: AbstractBaseUser
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The goal's first resolved cell → `cell_id` (unless a cell ref is given), and for an
    investigation with no work-order ref, that cell's newest detected work order."""
    if "cell_id" in refs or not scope.named:
        return {}, []
    notes = list(scope.notes)
    if not scope.cells:
        return {}, notes
    cell = scope.cells[0]
    tag = str(cell["tag"])
    resolved = {"cell_id": cell["cell_id"]}
    if "work_order_id" in refs or not INVESTIGATE.search(goal):
        return resolved, notes
    found, error = read(user, "workorders.get_work_orders", {"cell_id": cell["cell_id"], "status": "detected"})
    orders = (found or {}).get("work_orders") or []
    if orders:
        resolved["work_order_id"] = orders[0]["id"]
        reason = f"work order {orders[0]['id']} on {tag} is detected; investigating it"
    else:
        reason = f"no detected work order on {tag}; reading the cell" if found is not None else error
    notes.append({"action": "resolved", "capability": "workorders.get_work_orders", "reason": reason})
    return resolved, notes
