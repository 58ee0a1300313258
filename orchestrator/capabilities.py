"""What the orchestrator offers other apps: plan mode in the assistant creates plans here."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from core.access import OPERATOR
from core.capabilities import CapabilityContext, Tier, capability
from orchestrator.choices import Autonomy


class CreatePlanInput(BaseModel):
    goal: str = Field(min_length=1, max_length=2000)
    context_refs: list[Any] = Field(default_factory=list)
    constraints: dict[str, Any] = Field(default_factory=dict)
    done_when: str = ""
    autonomy: Autonomy = Autonomy.ASK_MUTATIONS
    planner: str = "heuristic"


@capability(
    "orchestrator.create_plan",
    description="Draft a goal-plan of capability-bound steps for the caller (shown for approval, not run).",
    input=CreatePlanInput,
    tier=Tier.SAFE,
    scopes=(OPERATOR,),
)
def create_plan(ctx: CapabilityContext, params: CreatePlanInput) -> dict[str, Any]:
    from orchestrator.schemas import plan_out
    from orchestrator.services.plans import plan_create

    plan = plan_create(
        owner=ctx.user,
        goal=params.goal,
        constraints=params.constraints,
        done_when=params.done_when,
        context_refs=params.context_refs,
        autonomy=params.autonomy.value,
        planner=params.planner,
    )
    out = plan_out(plan)
    out["summary"] = f"Draft plan {plan.pk} with {len(out['steps'])} step(s): {plan.goal[:80]}"
    return out
