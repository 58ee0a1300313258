"""Plans as the coordinator reads them: one compact dict per plan (its list_plans and get_plan tools,
and the context packet), with step statuses, open asks and what a derived plan changed."""

from __future__ import annotations

from typing import Any

from orchestrator.models import Plan


def compact_plan(plan: Plan) -> dict[str, Any]:
    steps = list(plan.steps.all())
    return {
        "id": plan.pk,
        "goal": plan.goal,
        "status": plan.status,
        "autonomy": plan.autonomy,
        "context_refs": plan.context_refs,
        "derived_from": plan.derived_from_id,
        "derivation": plan.derivation,
        "error": plan.error,
        "outcome": plan.outcome,
        "steps": [
            {
                "id": s.pk,
                "order": s.order,
                "capability": s.capability,
                "inputs": s.inputs,
                "depends_on": s.depends_on,
                "status": s.status,
                "error": s.error,
            }
            for s in steps
        ],
        "open_interactions": [
            {
                "id": i.pk,
                "step_order": i.step.order if i.step_id else None,  # "approve step 2" is read by this, not the text
                "kind": i.kind,
                "question": i.question,
                "options": i.options,
                "required_scope": i.required_scope,
                "coordinator_approvable": i.coordinator_approvable,
            }
            for i in plan.interactions.all()
            if i.status == "open"
        ],
    }
