"""Coordinator-facing read tools: the conversation's events, approvals (open and decided) and drafts.

Drafts belong to the assistant app: these tools reach them only through a capability the assistant
registers (`DRAFT_LIST` / `DRAFT_GET`, dispatched as the caller). When no such capability is
registered the tool says so instead of guessing.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from core.access import OPERATOR
from core.capabilities import CapabilityContext, Tier, capability, dispatch, registry
from orchestrator.choices import CONVERSATION_PATTERN
from orchestrator.models import CoordinatorTurn
from orchestrator.selectors import interactions_visible_to

DRAFT_LIST = "assistant.list_drafts"
DRAFT_GET = "assistant.get_draft"
# Drafts' reviews, as the person sees them (assistant/coordinator_capabilities.py)
DRAFT_REVIEWS = "assistant.list_draft_reviews"
DRAFT_REVIEW_GET = "assistant.get_draft_review"
DRAFT_DECIDE = "assistant.decide_draft"


class ConversationInput(BaseModel):
    conversation: str = Field(default="default", max_length=80, pattern=CONVERSATION_PATTERN)
    limit: int = Field(default=20, ge=1, le=100)


@capability(
    "orchestrator.list_conversation_events",
    description="This conversation's earlier turns (ids, message, actions taken and on which plans), oldest first.",
    input=ConversationInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def list_conversation_events(ctx: CapabilityContext, params: ConversationInput) -> list[dict[str, Any]]:
    turns = CoordinatorTurn.objects.filter(user=ctx.user, conversation=params.conversation).order_by("-id")
    return [
        {
            "event_id": t.pk,
            "message": t.message,
            "status": t.status,
            "actions": [
                {"type": e["type"], "plan_id": e["result"].get("plan_id"), "ok": e["result"].get("ok")}
                for e in t.executed
            ],
            "plan_ids": t.references.get("plan_ids", []),
        }
        for t in reversed(list(turns[: params.limit]))
    ]


class ApprovalsInput(BaseModel):
    plan_id: int | None = Field(default=None, description="Only this plan's asks.")
    limit: int = Field(default=20, ge=1, le=100)


@capability(
    "orchestrator.list_approvals",
    description=(
        "Asks and approvals visible to the caller, open and decided (who decided, when, what), newest first; "
        "coordinator_approvable marks the bounded checkpoints the coordinator may decide."
    ),
    input=ApprovalsInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def list_approvals(ctx: CapabilityContext, params: ApprovalsInput) -> list[dict[str, Any]]:
    qs = interactions_visible_to(ctx.user).select_related("answered_by")
    if params.plan_id is not None:
        qs = qs.filter(plan_id=params.plan_id)
    return [
        {
            "id": i.pk,
            "plan_id": i.plan_id,
            "plan_status": i.plan.status,
            "step_order": i.step.order if i.step_id else None,
            "kind": i.kind,
            "question": i.question,
            "required_scope": i.required_scope,
            "coordinator_approvable": i.coordinator_approvable,
            "status": i.status,
            "decision": (i.answer or {}).get("decision") or (i.answer or {}).get("choice"),
            "decided_by": i.answered_by.get_username() if i.answered_by_id else None,
            "decided_at": i.answered_at.isoformat() if i.answered_at else None,
            "approval_requested": bool(i.evidence.get("approval_requested_by")),
        }
        for i in qs.order_by("-id")[: params.limit]
    ]


class DraftsInput(BaseModel):
    draft_id: int | None = Field(default=None, description="One draft; omit to list the caller's drafts.")
    status: str | None = None
    limit: int = Field(default=10, ge=1, le=50)


def draft_read(user: Any, draft_id: int | None = None, **filters: Any) -> dict[str, Any]:
    """Drafts through the assistant's capabilities, as `user`: {available, drafts|draft|error}."""
    name = DRAFT_GET if draft_id is not None else DRAFT_LIST
    if registry.get(name) is None:
        return {"available": False, "error": f"no {name} capability is registered; drafts cannot be read"}
    args = {"draft_id": draft_id} if draft_id is not None else {k: v for k, v in filters.items() if v is not None}
    result = dispatch(name, args, ctx=CapabilityContext(user=user, agent="coordinator"))
    if result.is_error:
        return {"available": True, "error": result.message}
    return {"available": True, ("draft" if draft_id is not None else "drafts"): result.content}


@capability(
    "orchestrator.read_drafts",
    description="The caller's authoring drafts (or one draft) through the assistant's draft capabilities.",
    input=DraftsInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def read_drafts(ctx: CapabilityContext, params: DraftsInput) -> dict[str, Any]:
    if params.draft_id is not None:
        return draft_read(ctx.user, params.draft_id)
    return draft_read(ctx.user, status=params.status, limit=params.limit)


def draft_review_read(user: Any, draft_id: int) -> dict[str, Any]:
    """One draft's review state as `user` sees it ({"error": …} when it is not visible or not readable)."""
    if registry.get(DRAFT_REVIEW_GET) is None:
        return {"error": f"no {DRAFT_REVIEW_GET} capability is registered; draft reviews cannot be read"}
    result = dispatch(DRAFT_REVIEW_GET, {"draft_id": draft_id}, ctx=CapabilityContext(user=user, agent="coordinator"))
    return {"error": result.message} if result.is_error else result.content


def draft_decide(user: Any, draft_id: int, decision: str, reason: str = "") -> dict[str, Any]:
    """Approve, reject or publish a draft as `user` through the assistant's capability (its services
    check scope and separation of duties again). Dispatched without an agent name: the capability is
    for a person's own request (ui_only), and the coordinator runs it only for words of theirs that
    asked for it (validated), never on its own."""
    if registry.get(DRAFT_DECIDE) is None:
        return {"ok": False, "error": f"no {DRAFT_DECIDE} capability is registered"}
    args = {"draft_id": draft_id, "decision": decision, "reason": reason}
    result = dispatch(DRAFT_DECIDE, args, ctx=CapabilityContext(user=user))
    return {"ok": False, "error": result.message} if result.is_error else {"ok": True, **result.content}
