"""What the orchestrator offers other apps: plan mode in the assistant creates plans here."""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch, Q
from pydantic import BaseModel, Field

from core.access import OPERATOR, is_admin
from core.capabilities import CapabilityContext, Tier, capability
from core.models import AgentRun, AgentStep
from orchestrator.choices import CONVERSATION_PATTERN, Autonomy
from orchestrator.compact import compact_plan
from orchestrator.coordinator.service import coordinator_turn
from orchestrator.schemas import plan_out
from orchestrator.selectors import interactions_needing, plan_get, plans_for
from orchestrator.services.plans import plan_create


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


class ListPlansInput(BaseModel):
    status: str | None = Field(default=None, description="Only plans in this status.")
    limit: int = Field(default=10, ge=1, le=50)


class PlanIdInput(BaseModel):
    plan_id: int


@capability(
    "orchestrator.list_plans",
    description="The caller's goal-plans, newest first, with step statuses and open asks.",
    input=ListPlansInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def list_plans(ctx: CapabilityContext, params: ListPlansInput) -> list[dict[str, Any]]:
    qs = plans_for(ctx.user)
    if params.status:
        qs = qs.filter(status=params.status)
    return [compact_plan(p) for p in qs[: params.limit]]


@capability(
    "orchestrator.get_plan",
    description="One of the caller's plans with its steps (results summarised) and asks.",
    input=PlanIdInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def get_plan(ctx: CapabilityContext, params: PlanIdInput) -> dict[str, Any]:
    return compact_plan(plan_get(ctx.user, params.plan_id))


@capability(
    "orchestrator.list_pending_interactions",
    description="Open asks (permissions, confirmations, gated approvals) waiting on the caller.",
    input=ListPlansInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def list_pending_interactions(ctx: CapabilityContext, params: ListPlansInput) -> list[dict[str, Any]]:
    return [
        {
            "id": i.pk,
            "plan_id": i.plan_id,
            "step_order": i.step.order if i.step_id else None,
            "kind": i.kind,
            "question": i.question,
            "options": i.options,
            "required_scope": i.required_scope,
            "coordinator_approvable": i.coordinator_approvable,
            # someone else's gated ask the caller decides (the owner's own asks come with their plans)
            "for_you_to_decide": i.plan.owner_id != ctx.user.pk,
        }
        for i in interactions_needing(ctx.user)[: params.limit]
    ]


class AgentRunsInput(BaseModel):
    agent: str | None = Field(default=None, description="e.g. investigator, planner, coordinator")
    work_order_id: int | None = Field(default=None, description="Runs about this work order.")
    limit: int = Field(default=5, ge=1, le=20)


@capability(
    "orchestrator.get_agent_runs",
    description="Recent agent runs (yours, or about work orders) with their steps: why did an agent do that?",
    input=AgentRunsInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def get_agent_runs(ctx: CapabilityContext, params: AgentRunsInput) -> list[dict[str, Any]]:
    qs = AgentRun.objects.prefetch_related(Prefetch("steps", queryset=AgentStep.objects.order_by("index")))
    if not is_admin(ctx.user):  # plant-wide work-order runs are operator-visible; other runs are the caller's
        qs = qs.filter(Q(user=ctx.user) | Q(subject_type="work_order"))
    if params.agent:
        qs = qs.filter(agent=params.agent)
    if params.work_order_id is not None:
        qs = qs.filter(subject_type="work_order", subject_id=str(params.work_order_id))
    return [
        {
            "id": run.pk,
            "agent": run.agent,
            "status": run.status,
            "finish_reason": run.finish_reason,
            "error": run.error,
            "subject": f"{run.subject_type}:{run.subject_id}" if run.subject_type else "",
            "output_summary": run.output_summary[:300],
            "steps": [
                {"tool": s.tool, "summary": s.result_summary[:160], "is_error": s.is_error} for s in run.steps.all()
            ],
        }
        for run in qs.order_by("-id")[: params.limit]
    ]


class CoordinateInput(BaseModel):
    message: str = Field(min_length=1, max_length=4000)
    conversation: str = Field(default="default", min_length=1, max_length=80, pattern=CONVERSATION_PATTERN)


COORDINATE = "orchestrator.coordinate"


def compact_turn(turn: Any) -> dict[str, Any]:
    """What a chat message keeps of a coordinator turn; the full record stays behind /explain."""
    actions = (turn.action_plan or {}).get("actions", [])
    executed = {e["action_index"]: e["result"] for e in turn.executed}
    rows = []
    for index, action in enumerate(actions):
        failed = [c for c in turn.validation if c["action_index"] == index and not c["ok"]]
        result = executed.get(index)
        rows.append(
            {
                "index": index,
                "type": action.get("type", ""),
                "plan_id": action.get("plan_id") or (result or {}).get("plan_id"),
                "allowed": not failed,
                "reason": "; ".join(f"{c['check']}: {c['reason']}" for c in failed),
                "executed": result is not None,
                "ok": bool(result.get("ok")) if result is not None else None,
                "error": (result or {}).get("error", ""),
            }
        )
    touched = sorted({r["plan_id"] for r in executed.values() if r.get("ok") and r.get("plan_id")})
    tools = [c["tool"] for c in turn.tool_calls]
    return {
        "turn_id": turn.pk,
        "conversation": turn.conversation,
        "status": turn.status,
        "answer": turn.answer,
        "error": turn.error,
        "tool_calls": len(tools),
        "tools": tools,
        "actions": rows,
        "references": turn.references,
        "plan_ids": touched,
        "agent_run_id": turn.agent_run_id,
        "explain": f"/api/v1/aria/coordinator/turns/{turn.pk}/explain",
        "summary": f"Coordinator turn {turn.pk} ({turn.status}): {(turn.answer.splitlines() or [''])[0][:120]}",
    }


@capability(
    COORDINATE,
    description="For the chat UI only (the Ask ARIA drawer's Coordinator mode), never an agent's tool: one "
    "coordinator turn as the caller — it inspects, validates and runs its own actions (it can pause, resume "
    "or cancel the caller's plans, create plans and decide asks it may decide) — returned compactly.",
    input=CoordinateInput,
    tier=Tier.MUTATE,  # its validated actions change plans and asks
    scopes=(OPERATOR,),
    handoff_to="coordinator",  # it runs another agent
    ui_only=True,  # never an agent's tool, an MCP tool or a plan step (dispatch refuses agents)
)
def coordinate(ctx: CapabilityContext, params: CoordinateInput) -> dict[str, Any]:
    turn = coordinator_turn(user=ctx.user, message=params.message, conversation=params.conversation)
    return compact_turn(turn)


# The coordinator's other read tools and the specialist runner register on import.
from orchestrator import read_tools, specialists  # noqa: E402, F401
