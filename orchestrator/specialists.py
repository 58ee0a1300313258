"""The specialist runners: run one agent profile as a plan step, with exactly that profile's tool
allowlist and model (use case), acting as the plan owner.

- `orchestrator.run_specialist` (safe) runs profiles that only read and propose;
- `orchestrator.run_writing_specialist` (mutate) runs profiles whose allowlist holds a mutate-tier
  tool, so delegating to them goes through the plan gate like any mutation (under ask_mutations the
  step waits for the owner's permission before the specialist may write).
Each refuses the other's profiles.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from core.access import OPERATOR
from core.agents.engines import model_for
from core.agents.loop import AgentSpec, FinishTool, run_agent
from core.capabilities import CapabilityContext, Tier, capability, registry
from core.errors import InvalidInput
from core.models import AgentStep
from orchestrator.coordinator.profiles import PROFILES, RUN_SPECIALIST, RUN_WRITING_SPECIALIST, Profile, runner_for
from orchestrator.models import PlanStep


class RunSpecialistInput(BaseModel):
    profile: str = Field(description="A profile name from the coordinator's specialist table.")
    task: str = Field(min_length=1, max_length=2000)
    context: dict[str, Any] = Field(default_factory=dict, description="Ids the agent works on (work_order_id, …).")


class SpecialistOutput(BaseModel):
    """Whatever the profile's finish tool submits (each agent owns its own schema)."""

    model_config = ConfigDict(extra="allow")


def _earlier_results(plan_id: Any, step_id: Any) -> list[dict[str, Any]]:
    if not plan_id:
        return []
    steps = PlanStep.objects.filter(plan_id=plan_id, status="done").exclude(pk=step_id).order_by("order")
    return [{"order": s.order, "capability": s.capability, "result": s.result} for s in steps]


def _profile(name: str, runner: str) -> Profile:
    profile = PROFILES.get(name)
    if profile is None or profile.capability:
        raise InvalidInput(f"{name!r} is not an agent profile {runner} can run.", field="profile")
    if runner_for(profile) != runner:
        kind = "writes" if runner == RUN_SPECIALIST else "does not write"
        raise InvalidInput(f"{name!r} {kind}: it runs through {runner_for(profile)}, not {runner}.", field="profile")
    return profile


def _run(ctx: CapabilityContext, params: RunSpecialistInput, profile: Profile, max_tier: Tier) -> dict[str, Any]:
    context = dict(params.context)
    if profile.covers == "review":
        context["plan_id"] = ctx.extra.get("plan_id")
        context["earlier_results"] = _earlier_results(ctx.extra.get("plan_id"), ctx.extra.get("step_id"))
    spec = AgentSpec(
        name=profile.agent, system_prompt=f"You are the {profile.name} specialist. {profile.system}".strip(),
        tools=list(profile.tools), use_case=profile.use_case, max_tier=max_tier,
        finish_tool=FinishTool(profile.finish, f"Submit the {profile.name} result.", SpecialistOutput),
        max_turns=8, max_tool_calls=12, timeout_seconds=120,
        pinned_write_args={k: v for k, v in params.context.items() if k.endswith("_id") and isinstance(v, int)},
    )  # fmt: skip
    message = f"{params.task}\nContext: {json.dumps(context, default=str)}"
    result = run_agent(spec, messages=message, ctx=CapabilityContext(user=ctx.user, agent=profile.agent))
    steps = AgentStep.objects.filter(run=result.run).exclude(kind="finish").order_by("index")
    used = [s.tool for s in steps]
    writes = [
        {"tool": s.tool, "args": s.args, "summary": s.result_summary}
        for s in steps
        if _mutates(s.tool) and not s.is_error
    ]
    if result.output is None:
        raise RuntimeError(f"{profile.name} ended with {result.finish_reason}: {result.run.error or result.text[:200]}")
    return {
        "profile": profile.name,
        "agent_run_id": result.run.pk,
        "use_case": profile.use_case,
        "model": result.run.model or model_for(profile.use_case),
        "allowed_tools": list(profile.tools),
        "tools_used": used,
        "writes": writes,
        "output": result.output,
        "summary": f"{profile.name} ({profile.use_case}) finished: {json.dumps(result.output)[:160]}",
    }


def _mutates(tool: str) -> bool:
    cap = registry.get(tool)
    return cap is not None and cap.tier >= Tier.MUTATE


@capability(
    RUN_SPECIALIST,
    description="Run a read-only specialist agent profile (its own tool allowlist and model) on a task; returns its output.",
    input=RunSpecialistInput,
    tier=Tier.SAFE,  # it reads and proposes; profiles that write run through run_writing_specialist
    scopes=(OPERATOR,),
)
def run_specialist(ctx: CapabilityContext, params: RunSpecialistInput) -> dict[str, Any]:
    return _run(ctx, params, _profile(params.profile, RUN_SPECIALIST), Tier.READ)


@capability(
    RUN_WRITING_SPECIALIST,
    description="Run a specialist agent profile that writes (its own allowlist, mutate tools included, and model) "
    "as the plan owner; returns its output and the writes it made.",
    input=RunSpecialistInput,
    tier=Tier.MUTATE,  # delegating a write is a mutation: the plan gate asks first under ask_mutations
    scopes=(OPERATOR,),
)
def run_writing_specialist(ctx: CapabilityContext, params: RunSpecialistInput) -> dict[str, Any]:
    return _run(ctx, params, _profile(params.profile, RUN_WRITING_SPECIALIST), Tier.MUTATE)
