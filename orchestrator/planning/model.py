"""The model-backed planner: the agent loop looks around with read tools, then `submit_plan`."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from pydantic import BaseModel, Field

from core.agents.loop import AgentSpec, FinishTool, run_agent
from core.agents.prompts import system_prompt_for
from core.capabilities import CapabilityContext, Tier, registry
from core.plan_templates import all_plan_templates
from orchestrator.planning import Proposal, expand_template, template_named_in
from orchestrator.planning.validation import ref_values

DEFAULT_PROMPT = """You are ARIA's planner. Turn the operator's goal into a short plan of steps,
each bound to one capability from the catalogue, with every required input filled in. Use the
read tools to look at the current state first when the goal refers to equipment or work orders.
Order the steps; a step's depends_on lists the indexes (0-based) of earlier steps it needs.
Add a quality_gate {field, op, threshold} only when the goal states a measurable bar.
Finish by calling submit_plan. Never invent capabilities or inputs."""

CONTEXT_MARKER = "PLAN_CONTEXT_JSON:"


class ProposedStep(BaseModel):
    capability: str
    inputs: dict[str, Any] = Field(default_factory=dict)
    depends_on: list[int] = Field(default_factory=list)
    quality_gate: dict[str, Any] | None = None


class SubmitPlan(BaseModel):
    steps: list[ProposedStep] = Field(min_length=1, max_length=50)


def _catalogue() -> list[dict[str, Any]]:
    return [
        {"name": c.name, "tier": c.tier.label, "description": c.description, "input": c.input_schema()}
        for c in registry.all()
        if not c.ui_only
    ]


def planner_message(goal: str, context_refs: list[dict[str, Any]], constraints: dict[str, Any]) -> str:
    context = {
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
        result = run_agent(
            spec,
            messages=planner_message(goal, context_refs, constraints),
            ctx=CapabilityContext(user=user),
            engine=self.engine,
            subject=("plan_goal", goal[:60]),
        )
        if result.output is None:
            reason = result.run.error or f"planner ended with {result.finish_reason} without submit_plan"
            return Proposal([], notes=[{"index": None, "capability": "", "action": "dropped", "reason": reason}])
        return Proposal(result.output["steps"])
