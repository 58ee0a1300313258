"""What the orchestrator's coordinator may read and do about authoring drafts and their reviews.

The coordinator lives in another app: it reaches drafts only through these capabilities, dispatched
as the person talking to it, so owner scoping, scopes and separation of duties are the same as on
the drafts routes:

- `assistant.list_draft_reviews` (read): the drafts a review or a publication concerns for the caller —
  their own drafts on the way (tested, reviewing, approved, publish failed) or recently published,
  and, for an approver, other authors' drafts waiting for them — each with who it waits for, what
  the caller may do now (`your_moves`), its reviews, and when and by whom it was published;
- `assistant.get_draft_review` (read): one such draft (another author's draft only for an approver);
- `assistant.decide_draft` (mutate, ui_only): approve, reject or publish one draft through the same
  services as the routes and the admin (`draft_approve`, `draft_reject`, `draft_publish`). Never an
  agent's tool, an MCP tool or a plan step; the coordinator runs it only for an action the person's
  own words asked for, after its validator checked the draft's state and `your_moves`.
"""

from __future__ import annotations

from typing import Any, Literal

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q
from django.urls import reverse
from pydantic import BaseModel, Field

from assistant import selectors
from assistant.choices import DraftStatus
from assistant.models import Draft, PublishedArtifact
from assistant.services.drafts import draft_approve, draft_reject
from assistant.services.publish import PUBLISHABLE, draft_publish, draft_status_reason
from core.access import APPROVER, OPERATOR, has_scopes
from core.capabilities import CapabilityContext, Tier, capability

S = DraftStatus
IN_REVIEW = (S.TESTED, S.REVIEWING, S.APPROVED, S.PUBLISH_FAILED)
WAITS_FOR = {
    S.TESTED: "an approver's review (an approver other than the author)",
    S.REVIEWING: "the reviewer's verdict",
    S.APPROVED: "publication by an approver other than the author and the one who approved it",
    S.PUBLISH_FAILED: "a retry of the publication once its cause is fixed",
}


def _moves(draft: Draft, user: AbstractBaseUser) -> list[str]:
    """What `user` may do to `draft` now — a hint for the coordinator, read from the draft's prefetched
    reviews so a listing costs the same whatever its length; the services decide again on the move
    (`draft_approve`: approver, not the author; `draft_publish`: approver, not the author, not the one
    whose review approved it — the release principal is not a person talking to the coordinator)."""
    if user.pk == draft.owner_id or not has_scopes(user, [APPROVER]):
        return []
    if draft.status == S.TESTED:
        return ["approve", "reject"]
    if draft.status in PUBLISHABLE:
        standing = [r for r in draft.reviews.all() if not r.cleared]
        latest = max(standing, key=lambda r: r.pk, default=None)
        if latest is None or latest.reviewer_id in (None, draft.owner_id, user.pk):
            return []
        return ["publish"]
    return []


def _review_row(
    draft: Draft, user: AbstractBaseUser, published: PublishedArtifact | None, *, why: bool
) -> dict[str, Any]:
    reviews = sorted(draft.reviews.all(), key=lambda r: -r.pk)[:3]
    return {
        "draft_id": draft.pk,
        "type": draft.type,
        "name": draft.name,
        "owner": draft.owner.get_username(),
        "status": draft.status,
        "version": draft.version,
        "waiting_for": WAITS_FOR.get(draft.status, ""),
        "status_reason": draft_status_reason(draft) if why else "",  # why it failed or was rejected
        "your_moves": _moves(draft, user),
        "reviews": [
            {
                "review_id": r.pk,
                "kind": r.kind,
                "decision": r.decision,
                "reviewer": r.reviewer.get_username() if r.reviewer_id else None,
                "at": r.created.isoformat(),
                "reason": r.reason[:200],
            }
            for r in reviews
        ],
        "published_at": published.created.isoformat() if published else None,
        "published_by": published.published_by.get_username() if published and published.published_by_id else None,
        "published_version": published.version if published else None,
        "link": reverse("admin:assistant_draft_change", args=[draft.pk]),
        "updated": draft.updated.isoformat(),
    }


def _rows(drafts: list[Draft], user: AbstractBaseUser, *, why: bool = False) -> list[dict[str, Any]]:
    published = {
        a.draft_id: a
        for a in PublishedArtifact.objects.filter(draft__in=[d.pk for d in drafts])
        .select_related("published_by")
        .order_by("created", "pk")
    }  # the latest publication of each draft wins
    return [_review_row(d, user, published.get(d.pk), why=why) for d in drafts]


class ListDraftReviewsInput(BaseModel):
    limit: int = Field(default=10, ge=1, le=50)


@capability(
    "assistant.list_draft_reviews",
    description=(
        "Authoring drafts whose review or publication concerns the caller, newest first: their own drafts in "
        "review, approved or recently published, and (approvers) other authors' drafts waiting for them. Each: "
        "status, waiting_for, your_moves (approve/reject/publish the caller may do now), reviews, "
        "published_at/published_by, link (the approval console page)."
    ),
    input=ListDraftReviewsInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def list_draft_reviews(ctx: CapabilityContext, params: ListDraftReviewsInput) -> list[dict[str, Any]]:
    mine = Q(owner=ctx.user, status__in=(*IN_REVIEW, S.PUBLISHED))
    qs = Draft.objects.filter(mine)
    if has_scopes(ctx.user, [APPROVER]):
        qs = qs | selectors.drafts_for_review(ctx.user)
    drafts = list(
        qs.select_related("owner").prefetch_related("reviews__reviewer").order_by("-updated", "-id")[: params.limit]
    )
    return _rows(drafts, ctx.user)


class DraftReviewInput(BaseModel):
    draft_id: int


@capability(
    "assistant.get_draft_review",
    description="One draft's review state for the caller (its owner, or an approver): as list_draft_reviews.",
    input=DraftReviewInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def get_draft_review(ctx: CapabilityContext, params: DraftReviewInput) -> dict[str, Any]:
    return _rows([selectors.draft_get(ctx.user, params.draft_id, for_review=True)], ctx.user, why=True)[0]


class DecideDraftInput(BaseModel):
    draft_id: int
    decision: Literal["approve", "reject", "publish"]
    reason: str = Field(default="", max_length=2000)


@capability(
    "assistant.decide_draft",
    description="For a person's own request only (the coordinator on their words), never an agent's tool: "
    "approve, reject or publish one draft through the drafts services, with their scope and separation of duties.",
    input=DecideDraftInput,
    tier=Tier.MUTATE,
    scopes=(APPROVER,),  # approving and publishing are approvers' work; an operator is refused here
    ui_only=True,  # never an agent's tool, an MCP tool or a plan step (dispatch refuses agents)
)
def decide_draft(ctx: CapabilityContext, params: DecideDraftInput) -> dict[str, Any]:
    draft = selectors.draft_get(ctx.user, params.draft_id, for_review=True)
    if params.decision == "approve":
        draft = draft_approve(draft=draft, actor=ctx.user, reason=params.reason)
    elif params.decision == "reject":
        draft = draft_reject(draft=draft, actor=ctx.user, reason=params.reason)
    else:
        draft = draft_publish(draft=draft, actor=ctx.user)
    return _rows([draft], ctx.user, why=True)[0]
