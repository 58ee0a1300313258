"""The deterministic planner: goal keywords + context refs → capability-bound steps.

A template named in the goal wins. Otherwise each rule below contributes steps when its
keywords appear in the goal or its ref type is in the context; inputs are filled from the refs
(`work_order:7` → `work_order_id=7`). Capabilities that are not registered are proposed anyway
and dropped by validation with a recorded reason, so the plan says what it could not do.
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from orchestrator.planning import Proposal, expand_template, template_named_in
from orchestrator.planning.validation import ref_values

INVESTIGATE = re.compile(r"\b(investigat\w*|root[- ]cause|rca|diagnos\w*|why)\b", re.IGNORECASE)
SIGNALS = re.compile(r"\b(signals?|trends?|readings?|vibration|temperature|pressure)\b", re.IGNORECASE)
BACKLOG = re.compile(r"\b(work orders|backlog|open orders)\b", re.IGNORECASE)


def heuristic_steps(goal: str, context_refs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    refs = ref_values(context_refs)
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
        return Proposal(heuristic_steps(goal, context_refs))
