"""Read access to authoring drafts for other agents (the coordinator): owner-scoped like the API."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from assistant import selectors
from assistant.choices import DraftStatus
from assistant.models import Draft
from core.access import OPERATOR
from core.capabilities import CapabilityContext, Tier, capability


class ListDraftsInput(BaseModel):
    status: DraftStatus | None = Field(default=None, description="Only drafts in this lifecycle state.")
    limit: int = Field(default=10, ge=1, le=50)


class GetDraftInput(BaseModel):
    draft_id: int


def draft_as_dict(draft: Draft) -> dict[str, Any]:
    return {
        "id": draft.pk,
        "type": draft.type,
        "name": draft.name,
        "status": draft.status,
        "owner": draft.owner.get_username(),
        "version": draft.version,
        "content_hash": draft.content_hash,
        "validation_ok": draft.validation_report.get("ok") if draft.validation_report else None,
        "test_ok": draft.test_report.get("ok") if draft.test_report else None,
        "updated": draft.updated.isoformat(),
    }


@capability(
    "assistant.list_drafts",
    description="The caller's authoring drafts (tools, skills, prompts, workflows, MCP servers), newest first.",
    input=ListDraftsInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def list_drafts(ctx: CapabilityContext, params: ListDraftsInput) -> list[dict[str, Any]]:
    drafts = selectors.drafts_visible(ctx.user).order_by("-updated", "-id")
    if params.status:
        drafts = drafts.filter(status=params.status)
    return [draft_as_dict(d) for d in drafts[: params.limit]]


@capability(
    "assistant.get_draft",
    description="One authoring draft the caller may see (its owner, or an approver reviewing it).",
    input=GetDraftInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def get_draft(ctx: CapabilityContext, params: GetDraftInput) -> dict[str, Any]:
    return draft_as_dict(selectors.draft_get(ctx.user, params.draft_id, for_review=True))
