"""`orchestrator.run_specialist`: run one agent profile as a plan step, with exactly that profile's
tool allowlist and model (use case). Also the offline policy of the plan reviewer profile.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from core.access import OPERATOR
from core.agents.engines import model_for
from core.agents.engines.fake import FakeReply, FakeState, fake_policy
from core.agents.loop import AgentSpec, FinishTool, run_agent
from core.capabilities import CapabilityContext, Tier, capability
from core.models import AgentStep
from orchestrator.coordinator.profiles import PROFILES, RUN_SPECIALIST


class RunSpecialistInput(BaseModel):
    profile: str = Field(description="A profile name from the coordinator's specialist table.")
    task: str = Field(min_length=1, max_length=2000)
    context: dict[str, Any] = Field(default_factory=dict, description="Ids the agent works on (work_order_id, …).")


class SpecialistOutput(BaseModel):
    """Whatever the profile's finish tool submits (each agent owns its own schema)."""

    model_config = ConfigDict(extra="allow")


def _earlier_results(plan_id: Any, step_id: Any) -> list[dict[str, Any]]:
    from orchestrator.models import PlanStep

    if not plan_id:
        return []
    steps = PlanStep.objects.filter(plan_id=plan_id, status="done").exclude(pk=step_id).order_by("order")
    return [{"order": s.order, "capability": s.capability, "result": s.result} for s in steps]


@capability(
    RUN_SPECIALIST,
    description="Run a specialist agent profile (its own tool allowlist and model) on a task; returns its output.",
    input=RunSpecialistInput,
    tier=Tier.SAFE,  # it reads and proposes; no profile run here writes anything
    scopes=(OPERATOR,),
)
def run_specialist(ctx: CapabilityContext, params: RunSpecialistInput) -> dict[str, Any]:
    profile = PROFILES.get(params.profile)
    if profile is None or profile.capability != RUN_SPECIALIST:
        raise ValueError(f"{params.profile!r} is not an agent profile run_specialist can run.")
    context = dict(params.context)
    if profile.covers == "review":
        context["plan_id"] = ctx.extra.get("plan_id")
        context["earlier_results"] = _earlier_results(ctx.extra.get("plan_id"), ctx.extra.get("step_id"))
    spec = AgentSpec(
        name=profile.agent, system_prompt=f"You are the {profile.name} specialist. {profile.system}".strip(),
        tools=list(profile.tools), use_case=profile.use_case, max_tier=Tier.READ,
        finish_tool=FinishTool(profile.finish, f"Submit the {profile.name} result.", SpecialistOutput),
        max_turns=8, max_tool_calls=12, timeout_seconds=120,
    )  # fmt: skip
    message = f"{params.task}\nContext: {json.dumps(context, default=str)}"
    result = run_agent(spec, messages=message, ctx=CapabilityContext(user=ctx.user, agent=profile.agent))
    used = list(AgentStep.objects.filter(run=result.run).exclude(kind="finish").values_list("tool", flat=True))
    if result.output is None:
        raise RuntimeError(f"{profile.name} ended with {result.finish_reason}: {result.run.error or result.text[:200]}")
    return {
        "profile": profile.name,
        "agent_run_id": result.run.pk,
        "use_case": profile.use_case,
        "model": result.run.model or model_for(profile.use_case),
        "allowed_tools": list(profile.tools),
        "tools_used": used,
        "output": result.output,
        "summary": f"{profile.name} ({profile.use_case}) finished: {json.dumps(result.output)[:160]}",
    }


@fake_policy("plan_reviewer")
def plan_reviewer(state: FakeState) -> FakeReply:
    """Offline reviewer: looks at the plan, then judges the earlier results it was given."""
    context = _context(state.user_text)
    plan_id = context.get("plan_id")
    if plan_id and not state.called("get_plan"):
        return FakeReply(tool_calls=[("get_plan", {"plan_id": plan_id})])
    results = context.get("earlier_results") or []
    empty = [r["order"] for r in results if not r.get("result")]
    verdict = "pass" if results and not empty else "needs_work"
    notes = (
        f"Checked {len(results)} earlier result(s)"
        + (f"; step(s) {empty} returned nothing." if empty else ".")
        + ("" if results else " Nothing to review yet.")
    )
    return FakeReply(tool_calls=[("submit_review", {"verdict": verdict, "notes": notes, "reviewed": len(results)})])


def _context(text: str) -> dict[str, Any]:
    for line in reversed((text or "").splitlines()):
        if line.startswith("Context: "):
            try:
                value = json.loads(line[len("Context: ") :])
            except ValueError:
                return {}
            return value if isinstance(value, dict) else {}
    return {}
