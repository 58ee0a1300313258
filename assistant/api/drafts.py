"""Drafts and their lifecycle actions. Mutations need operator; approve needs approver."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router, Status

from assistant import selectors
from assistant.api.schemas import ApproveIn, DraftIn, DraftOut, DraftPatch, RejectIn, ReviewOut, with_status_reasons
from assistant.choices import DraftStatus
from assistant.models import Draft
from assistant.services.drafts import (
    draft_approve,
    draft_create,
    draft_discard,
    draft_reject,
    draft_test,
    draft_update,
    draft_validate,
)
from assistant.services.publish import draft_publish
from assistant.services.review import draft_agent_review
from core.access import APPROVER, OPERATOR, require_any_scope, require_scopes
from core.errors import InvalidInput
from core.json_types import RowId
from core.throttling import DRAFT_REVIEW, DRAFT_TEST, UserRateLimit

router = Router(tags=["assistant"])


@router.get("/drafts", response=list[DraftOut])
def list_drafts(
    request: HttpRequest,
    status: DraftStatus | None = None,
    session_id: RowId | None = None,
    review: bool = False,
    without_session: bool = False,
) -> list:
    """`review=true` (approvers): other authors' drafts that wait for an approval or a publication.
    `without_session=true`: the caller's drafts in no session (the workbench's "No session", the API,
    a plan's authoring step), which the drawer lists beside the open session's."""
    if review:
        require_scopes(request.user, APPROVER)
        qs = selectors.drafts_for_review(request.user)
    else:
        require_scopes(request.user, OPERATOR)
        qs = selectors.drafts_visible(request.user)
    if status:
        qs = qs.filter(status=status)
    if session_id is not None:
        qs = qs.filter(session_id=session_id)
    if without_session:
        qs = qs.filter(session__isnull=True)
    return with_status_reasons(list(qs[:200]), request.user)


@router.post("/drafts", response={201: DraftOut})
def create_draft(request: HttpRequest, payload: DraftIn) -> Status:
    require_scopes(request.user, OPERATOR)
    # A draft goes only into the caller's own session (admins too: acting in a session is its owner's).
    session = selectors.session_owned(request.user, payload.session_id) if payload.session_id else None
    draft = draft_create(owner=request.user, type=payload.type, name=payload.name, spec=payload.spec, session=session)
    return Status(201, draft)


@router.get("/drafts/{draft_id}", response=DraftOut)
def get_draft(request: HttpRequest, draft_id: int) -> Draft:
    """The draft, to whoever may read it for review (selectors.draft_get): an approver who is not
    an operator decides on it, so reads it too, as its reviews (`list_reviews`)."""
    require_any_scope(request.user, OPERATOR, APPROVER)
    return selectors.draft_get(request.user, draft_id, for_review=True)


@router.patch("/drafts/{draft_id}", response=DraftOut)
def patch_draft(request: HttpRequest, draft_id: int, payload: DraftPatch) -> Draft:
    require_scopes(request.user, OPERATOR)
    draft = selectors.draft_get(request.user, draft_id)
    if payload.name is None and payload.spec is None:  # an empty edit would still make a new candidate
        raise InvalidInput("Nothing to edit: give name or spec.", field="spec")
    return draft_update(draft=draft, actor=request.user, name=payload.name, spec=payload.spec)


@router.delete("/drafts/{draft_id}", response={204: None})
def discard_draft(request: HttpRequest, draft_id: int) -> Status:
    """The author discards a draft never published and not mid-step (409 otherwise)."""
    require_scopes(request.user, OPERATOR)
    draft_discard(draft=selectors.draft_get(request.user, draft_id), actor=request.user)
    return Status(204, None)


@router.post("/drafts/{draft_id}/validate", response=DraftOut)
def validate_draft(request: HttpRequest, draft_id: int) -> Draft:
    require_scopes(request.user, OPERATOR)
    return draft_validate(draft=selectors.draft_get(request.user, draft_id), actor=request.user)


@router.post("/drafts/{draft_id}/test", response=DraftOut, throttle=UserRateLimit(DRAFT_TEST))
def test_draft(request: HttpRequest, draft_id: int) -> Draft:
    require_scopes(request.user, OPERATOR)
    return draft_test(draft=selectors.draft_get(request.user, draft_id), actor=request.user)


@router.post("/drafts/{draft_id}/review", response=DraftOut, throttle=UserRateLimit(DRAFT_REVIEW))
def review_draft(request: HttpRequest, draft_id: int) -> Draft:
    """agent_review / full_autonomy: the reviewer principal judges the candidate (a model call, so
    counted per user: ARIA_RATE_DRAFT_REVIEW; over it a 429 and no review)."""
    require_scopes(request.user, OPERATOR)
    return draft_agent_review(draft=selectors.draft_get(request.user, draft_id), actor=request.user)


@router.post("/drafts/{draft_id}/approve", response=DraftOut)
def approve_draft(request: HttpRequest, draft_id: int, payload: ApproveIn) -> Draft:
    require_scopes(request.user, APPROVER)
    draft = selectors.draft_get(request.user, draft_id, for_review=True)
    return draft_approve(
        draft=draft,
        actor=request.user,
        reason=payload.reason,
        tool_tiers=payload.tool_tiers,
        candidate_hash=payload.candidate_hash,
    )


@router.post("/drafts/{draft_id}/reject", response=DraftOut)
def reject_draft(request: HttpRequest, draft_id: int, payload: RejectIn) -> Draft:
    require_scopes(request.user, APPROVER)
    draft = selectors.draft_get(request.user, draft_id, for_review=True)
    return draft_reject(draft=draft, actor=request.user, reason=payload.reason)


@router.post("/drafts/{draft_id}/publish", response=DraftOut)
def publish_draft(request: HttpRequest, draft_id: int) -> Draft:
    require_scopes(request.user)  # who may publish (approver or release, never the author) is the service's call
    draft = selectors.draft_get(request.user, draft_id, for_review=True)
    return draft_publish(draft=draft, actor=request.user)


@router.get("/drafts/{draft_id}/reviews", response=list[ReviewOut])
def list_reviews(request: HttpRequest, draft_id: int) -> list:
    """The draft's reviews, newest first, to whoever may read it for review (selectors.draft_get):
    its author, admins, and from `tested` on approvers and the reviewer and release principals —
    an approver deciding reads the earlier decisions, so operator is not required. A user with
    neither operator nor approver gets the 403 of a role they lack; another author's draft not yet
    submitted is a 404, as for a missing id."""
    require_any_scope(request.user, OPERATOR, APPROVER)
    draft = selectors.draft_get(request.user, draft_id, for_review=True)
    return list(draft.reviews.select_related("reviewer"))
