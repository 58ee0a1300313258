"""Plans and interactions under /api/v1/aria/. Owner-scoped: another owner's plan is a 404."""

from __future__ import annotations

from typing import Annotated, Any

from django.http import HttpRequest
from ninja import Query, Router
from ninja.responses import Status
from pydantic import StringConstraints

from core.access import OPERATOR, get_owned_or_404, owned_by, require_scopes
from core.agents.engines import get_engine
from core.throttling import COORDINATOR, PLAN_CREATE, UserRateLimit, token_budget_check
from orchestrator.choices import CONVERSATION_PATTERN, PlanStatus
from orchestrator.coordinator.service import coordinator_turn
from orchestrator.models import CoordinatorTurn
from orchestrator.schemas import (
    AnswerIn,
    PlanCreateIn,
    PlanPatchIn,
    TurnIn,
    interaction_out,
    plans_out,
    turn_explain,
    turn_out,
)
from orchestrator.selectors import interaction_get, interactions_needing, plan_get, plans_for
from orchestrator.services.executor import plan_start
from orchestrator.services.interactions import interaction_answer
from orchestrator.services.jobs import plan_poll
from orchestrator.services.plans import plan_approve, plan_create, plan_patch

PREFIX = "/aria"
# A conversation's name as every conversation has one (the export's path states the same): a filter
# naming one no conversation can have is a 422, not an empty list.
ConversationName = Annotated[str, StringConstraints(pattern=CONVERSATION_PATTERN)]

router = Router(tags=["orchestrator"])


def _authenticated(request: HttpRequest) -> None:
    require_scopes(request.user)


@router.get("/plans")
def list_plans(
    request: HttpRequest, status: PlanStatus | None = None, limit: int = Query(50, ge=1, le=200)
) -> list[dict[str, Any]]:
    _authenticated(request)
    qs = plans_for(request.user)
    if status:
        qs = qs.filter(status=status)
    return plans_out(qs[:limit], request.user)


@router.post("/plans", response={201: dict}, throttle=UserRateLimit(PLAN_CREATE))
def create_plan(request: HttpRequest, payload: PlanCreateIn) -> Status:
    require_scopes(request.user, OPERATOR)
    if payload.planner == "model":  # the heuristic planner calls no model
        token_budget_check(request.user, provider=get_engine().provider)
    plan = plan_create(owner=request.user, **payload.dict())
    return Status(201, plans_out([plan_get(request.user, plan.pk)], request.user)[0])


@router.get("/plans/{plan_id}")
def get_plan(request: HttpRequest, plan_id: int) -> dict[str, Any]:
    _authenticated(request)
    return plans_out([plan_get(request.user, plan_id)], request.user)[0]


@router.patch("/plans/{plan_id}")
def patch_plan(request: HttpRequest, plan_id: int, payload: PlanPatchIn) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)  # a plan move, as approve/execute: not for a demoted owner
    plan_patch(
        plan=plan_get(request.user, plan_id),
        actor=request.user,
        autonomy=payload.autonomy,
        cancel=payload.status == PlanStatus.CANCELLED,
    )
    return plans_out([plan_get(request.user, plan_id)], request.user)[0]


@router.post("/plans/{plan_id}/approve")
def approve_plan(request: HttpRequest, plan_id: int) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)
    plan_approve(plan=plan_get(request.user, plan_id), actor=request.user)
    return plans_out([plan_get(request.user, plan_id)], request.user)[0]


@router.post("/plans/{plan_id}/execute", response={202: dict})
def execute_plan(request: HttpRequest, plan_id: int) -> Status:
    require_scopes(request.user, OPERATOR)
    plan_start(plan=plan_get(request.user, plan_id), actor=request.user)
    return Status(202, plans_out([plan_get(request.user, plan_id)], request.user)[0])


@router.post("/plans/{plan_id}/poll")
def poll_plan(request: HttpRequest, plan_id: int) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)  # polling moves the plan's waiting steps on
    plan = plan_get(request.user, plan_id)
    plan_poll(plan.pk)
    return plans_out([plan_get(request.user, plan_id)], request.user)[0]


@router.get("/plans/{plan_id}/interactions")
def list_interactions(request: HttpRequest, plan_id: int) -> list[dict[str, Any]]:
    _authenticated(request)
    plan = plan_get(request.user, plan_id)
    return [interaction_out(i) for i in plan.interactions.select_related("step", "answered_by")]


@router.post("/interactions/{interaction_id}/answer")
def answer_interaction(request: HttpRequest, interaction_id: int, payload: AnswerIn) -> dict[str, Any]:
    _authenticated(request)
    interaction = interaction_get(request.user, interaction_id)
    interaction = interaction_answer(
        interaction=interaction,
        actor=request.user,
        decision=payload.decision,
        choice=payload.choice,
        inputs=payload.inputs,
    )
    return interaction_out(interaction)


@router.get("/needs-me")
def needs_me(request: HttpRequest) -> dict[str, Any]:
    """Open asks waiting on the viewer: the nav badge shows `count` (distinct plans)."""
    _authenticated(request)
    asks = list(interactions_needing(request.user))
    return {"count": len({i.plan_id for i in asks}), "interactions": [interaction_out(i) for i in asks]}


# --- the coordinator --------------------------------------------------------------------------------


def _turns(request: HttpRequest):

    return owned_by(CoordinatorTurn.objects.all(), request.user, owner_field="user")


@router.post("/coordinator/turns", response={201: dict}, throttle=UserRateLimit(COORDINATOR))
def coordinator_turn_create(request: HttpRequest, payload: TurnIn) -> Status:
    require_scopes(request.user, OPERATOR)
    token_budget_check(request.user, provider=get_engine().provider)

    turn = coordinator_turn(user=request.user, message=payload.message, conversation=payload.conversation)
    return Status(201, turn_out(turn, detail=True))


@router.get("/coordinator/turns")
def coordinator_turn_list(request: HttpRequest, conversation: ConversationName | None = None) -> list[dict[str, Any]]:
    _authenticated(request)
    qs = _turns(request)
    if conversation:
        qs = qs.filter(conversation=conversation)
    return [turn_out(t) for t in qs.order_by("-id")[:100]]


@router.get("/coordinator/turns/{turn_id}")
def coordinator_turn_detail(request: HttpRequest, turn_id: int) -> dict[str, Any]:
    _authenticated(request)
    return turn_out(get_owned_or_404(_turns(request), request.user, owner_field="user", pk=turn_id), detail=True)


@router.get("/coordinator/turns/{turn_id}/explain")
def coordinator_turn_explain(request: HttpRequest, turn_id: int) -> dict[str, Any]:
    _authenticated(request)
    return turn_explain(get_owned_or_404(_turns(request), request.user, owner_field="user", pk=turn_id))


def _mount() -> None:
    """Routes kept in their own modules (one per concern) join this router when present."""
    from importlib import import_module  # importlib: optional per-concern route modules
    from importlib.util import find_spec

    for module in ("api_steps", "api_turns"):
        if find_spec(f"orchestrator.{module}"):
            router.add_router("", import_module(f"orchestrator.{module}").router)


_mount()
