"""The draft lifecycle: one transition service, then validate, test, manual approve/reject."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from assistant.choices import DRAFT_BUSY, DRAFT_TRANSITIONS, DraftStatus, DraftType, ReviewDecision, ReviewKind
from assistant.conf import get_config
from assistant.models import Draft, PromptVersion, PublishedArtifact, Review, Session
from assistant.models.drafts import DRAFT_NAME_MAX_LENGTH
from assistant.publishers import mcp_tools_of
from assistant.services.draft_tests import run_draft_tests
from assistant.validators import validate_spec
from core.access import APPROVER, has_scopes
from core.audit import audit_record
from core.errors import Conflict, Forbidden, InvalidInput
from core.events import private_scope, publish, scope_holder_ids
from core.transitions import Move, StateMachine, transition

S = DraftStatus
AUDIT_TARGET = "assistant.draft"
# Where a draft waits for an approver (assistant.selectors.drafts_for_review).
REVIEW_QUEUE = frozenset({S.TESTED, S.APPROVED, S.PUBLISH_FAILED})


def _draft_audience(draft: Draft, *statuses: str) -> list[int]:
    """Who gets its `draft_updated`: the author, plus the approvers when the draft enters or
    leaves their queue; no one else."""
    if REVIEW_QUEUE.isdisjoint(statuses):
        return [draft.owner_id]
    return [draft.owner_id, *scope_holder_ids(APPROVER, besides=draft.owner_id)]


def _audit(draft: Draft, actor: AbstractBaseUser | None, action: str, **details: Any) -> None:
    """The audit record and the `draft_updated` bus event, both in the caller's transaction."""
    audit_record(actor=actor, action=action, target_type=AUDIT_TARGET, target_id=draft.pk, details=details)
    if action in ("draft.create", "draft.edit"):
        with private_scope(*_draft_audience(draft, draft.status, details.get("from_status", ""))):
            publish(*_draft_updated(draft))


def draft_name_checked(name: str, *, field: str = "name") -> str:
    """The name as stored (surrounding spaces dropped). Empty, or longer than the model's
    `max_length`, is a 422 naming `field`: a name is never cut short behind its author's back."""
    cleaned = name.strip()
    if not cleaned:
        raise InvalidInput("name is required." if field == "name" else f"{field}: a draft needs a name.", field=field)
    if len(cleaned) > DRAFT_NAME_MAX_LENGTH:
        raise InvalidInput(
            f"{field}: a draft's name has at most {DRAFT_NAME_MAX_LENGTH} characters ({len(cleaned)} given).",
            field=field,
        )
    return cleaned


def draft_create(
    *,
    owner: AbstractBaseUser,
    type: str,
    name: str,
    spec: dict[str, Any],
    session: Session | None = None,
) -> Draft:
    if type not in DraftType.values:
        raise InvalidInput(f"Unknown draft type {type!r}; choose one of {DraftType.values}.", field="type")
    name = draft_name_checked(name)
    config = get_config()
    with transaction.atomic():
        # The author's row is locked first (the only lock taken here), so two creates by one
        # author count one after the other and neither bound can be passed by a race.
        get_user_model().objects.select_for_update().filter(pk=owner.pk).first()
        if session is not None and session.drafts.count() >= config.max_drafts_per_session:
            limit = config.max_drafts_per_session
            raise InvalidInput(f"A session holds at most {limit} drafts (max_drafts_per_session).", field="drafts")
        unpublished = Draft.objects.filter(owner_id=owner.pk).exclude(status=S.PUBLISHED).count()
        if unpublished >= config.max_open_drafts_per_author:
            raise InvalidInput(
                f"You have {unpublished} drafts not yet published; at most {config.max_open_drafts_per_author} "
                "(max_open_drafts_per_author). Publish or delete some first.",
                field="drafts",
                code="draft_limit",
            )
        draft = Draft(owner=owner, session=session, type=type, name=name, spec=spec or {})
        draft.content_hash = draft.compute_hash()
        draft.save()
        _audit(draft, owner, "draft.create", type=type, name=draft.name, hash=draft.content_hash)
    return draft


def _locked_by_author(draft: Draft, actor: AbstractBaseUser, verb: str, *, code: str) -> Draft:
    """The draft, locked (inside the caller's transaction), when `actor` is its author and it is
    not mid-step (validating, testing, reviewing, publishing): a 403, else a 409."""
    if actor.pk != draft.owner_id:
        raise Forbidden(f"Only the draft's author can {verb} it.", code=code)
    draft = Draft.objects.select_for_update().get(pk=draft.pk)
    if draft.status in DRAFT_BUSY:
        raise Conflict(f"Draft is {draft.status}; {verb} it when that finishes.", allowed=[])
    return draft


def draft_update(
    *, draft: Draft, actor: AbstractBaseUser, name: str | None = None, spec: dict[str, Any] | None = None
) -> Draft:
    """An edit makes a new candidate: back to `draft`, version + 1, reports and reviews cleared.

    Only the author edits: whoever shaped a candidate must never be the one to approve it."""
    with transaction.atomic():
        draft = _locked_by_author(draft, actor, "edit", code="separation_of_duties")
        if name is not None:
            draft.name = draft_name_checked(name)
        if spec is not None:
            draft.spec = spec
        old_status = draft.status
        draft.status = S.DRAFT
        draft.version += 1
        draft.validation_report = {}
        draft.test_report = {}
        draft.content_hash = draft.compute_hash()
        draft.save()
        cleared = draft.reviews.filter(cleared=False).update(cleared=True)
        _audit(draft, actor, "draft.edit", from_status=old_status, version=draft.version, reviews_cleared=cleared)
    return draft


def draft_discard(*, draft: Draft, actor: AbstractBaseUser) -> None:
    """The author deletes a draft that was never published and is not mid-step (validating,
    testing, reviewing, publishing). A draft that was published once — even if edited since —
    stays: it is the record behind a published artifact. Audited (the record keeps type, name,
    version and hash); `draft_updated` with status `discarded` goes to the author and, when the
    draft waited in the approvers' queue, to them."""
    with transaction.atomic():
        draft = _locked_by_author(draft, actor, "discard", code="not_author")
        was_published = (
            draft.status == S.PUBLISHED
            or PublishedArtifact.objects.filter(draft=draft).exists()
            or PromptVersion.objects.filter(draft=draft).exists()
        )
        if was_published:
            raise Conflict("A draft that was published stays as the record of what was published.", allowed=[])
        audit_record(
            actor=actor,
            action="draft.discard",
            target_type=AUDIT_TARGET,
            target_id=draft.pk,
            details={
                "type": draft.type,
                "name": draft.name,
                "version": draft.version,
                "hash": draft.content_hash,
                "status": draft.status,
            },
        )
        event, payload = _draft_updated(draft)
        with private_scope(*_draft_audience(draft, draft.status)):
            publish(event, {**payload, "status": "discarded"})
        draft.delete()


DRAFT_MACHINE = StateMachine("draft", DRAFT_TRANSITIONS)


def _draft_updated(draft: Draft) -> tuple[str, dict[str, Any]]:
    payload = {"draft_id": draft.pk, "draft_type": draft.type, "name": draft.name, "status": draft.status}
    return "draft_updated", {**payload, "version": draft.version}


def _set_reports(draft: Draft, move: Move) -> None:
    """A move out of validating/testing carries its report."""
    for key in ("validation_report", "test_report"):
        if key in move.details:
            setattr(draft, key, move.details.pop(key))


def draft_transition(*, draft: Draft, to_status: str, actor: AbstractBaseUser | None, **details: Any) -> Draft:
    """Lock the row, reject an illegal move with the allowed ones (409), record the change."""
    with private_scope(*_draft_audience(draft, draft.status, to_status)):  # the status it leaves, as last read
        transition(
            DRAFT_MACHINE,
            Draft.objects.all(),
            draft.pk,
            to_status,
            actor=actor,
            target_type=AUDIT_TARGET,
            details=details,
            on_move=_set_reports,
            audit=lambda m: ("draft.transition", {"from_status": m.from_state, "to_status": m.to_state, **m.details}),
            event=lambda m: _draft_updated(m.instance),
        )
    draft.refresh_from_db()
    return draft


def draft_validate(*, draft: Draft, actor: AbstractBaseUser) -> Draft:
    draft = draft_transition(draft=draft, to_status=S.VALIDATING, actor=actor)
    report = validate_spec(draft.type, draft.name, draft.spec, get_config())
    report["candidate_hash"], report["version"] = draft.content_hash, draft.version
    to_status = S.VALIDATED if report["ok"] else S.VALIDATION_FAILED
    return draft_transition(draft=draft, to_status=to_status, actor=actor, validation_report=report)


def draft_test(*, draft: Draft, actor: AbstractBaseUser) -> Draft:
    draft = draft_transition(draft=draft, to_status=S.TESTING, actor=actor)
    try:
        report = run_draft_tests(draft, get_config())
    except Exception as exc:  # a crashing runner is a failed test, never a stuck `testing` draft
        report = {"ok": False, "cases": [], "error": f"{type(exc).__name__}: {exc}"}
    report["candidate_hash"], report["version"] = draft.content_hash, draft.version
    to_status = S.TESTED if report["ok"] else S.TEST_FAILED
    return draft_transition(draft=draft, to_status=to_status, actor=actor, test_report=report)


def _require_approver(draft: Draft, actor: AbstractBaseUser) -> None:
    if not has_scopes(actor, [APPROVER]):
        raise Forbidden("Approving requires scope: approver.", code="missing_scope")
    if actor.pk == draft.owner_id:
        raise Forbidden("Separation of duties: the author cannot approve their own draft.", code="separation_of_duties")


MCP_REVIEW_TIERS = ("read", "safe", "mutate", "gated")


def mcp_tier_choices(draft: Draft, tool_tiers: dict[str, str] | None) -> dict[str, str]:
    """The approver's tier per MCP tool, checked: only an MCP server draft's own tools, only
    read/safe/mutate/gated. A tool left out is published at its declared tier, else mutate."""
    if not tool_tiers:
        return {}
    if draft.type != DraftType.MCP_SERVER:
        raise InvalidInput("tool_tiers applies to MCP server drafts only.", field="tool_tiers")
    names = {str(t.get("name")) for t in mcp_tools_of(draft.spec, draft.test_report) if isinstance(t, dict)}
    unknown = sorted(set(tool_tiers) - names)
    if unknown:
        raise InvalidInput(f"tool_tiers: {unknown} are not tools of this server ({sorted(names)}).", field="tool_tiers")
    bad = sorted(name for name, tier in tool_tiers.items() if tier not in MCP_REVIEW_TIERS)
    if bad:
        raise InvalidInput(f"tool_tiers: the tier of {bad} must be one of {MCP_REVIEW_TIERS}.", field="tool_tiers")
    return dict(tool_tiers)


def draft_approve(
    *,
    draft: Draft,
    actor: AbstractBaseUser,
    reason: str = "",
    tool_tiers: dict[str, str] | None = None,
    candidate_hash: str | None = None,
) -> Draft:
    """Manual policy: an approver who is not the author approves this exact candidate (for an MCP
    server, with the tier they chose for each tool; checked before anything moves).

    `candidate_hash`: the content hash of the candidate the approver read. When the author has
    made a new candidate since (edited, validated and tested again), the approval is refused (409
    `candidate_changed`) instead of landing on text the approver never saw."""
    _require_approver(draft, actor)
    tiers = mcp_tier_choices(draft, tool_tiers)
    with transaction.atomic():
        current = Draft.objects.select_for_update().get(pk=draft.pk)
        if candidate_hash is not None and candidate_hash != current.content_hash:
            raise Conflict(
                f"The draft changed since you read it: it is now v{current.version} ({current.status}). "
                "Read the new candidate before approving it.",
                field="candidate_hash",
                code="candidate_changed",
                version=current.version,
                content_hash=current.content_hash,
            )
        draft = draft_transition(draft=current, to_status=S.APPROVED, actor=actor, via="manual", reason=reason)
        Review.objects.record(
            draft,
            kind=ReviewKind.MANUAL,
            reviewer=actor,
            decision=ReviewDecision.APPROVE,
            reason=reason,
            tool_tiers=tiers,
        )
        details: dict[str, Any] = {"via": "manual", "hash": draft.content_hash, "version": draft.version}
        if tiers:
            details["tool_tiers"] = tiers
        _audit(draft, actor, "draft.approve", **details)
    return draft


def draft_reject(*, draft: Draft, actor: AbstractBaseUser, reason: str) -> Draft:
    """A human rejection goes through the review states: tested → reviewing → review_rejected."""
    _require_approver(draft, actor)
    if not reason.strip():
        raise InvalidInput("A rejection needs a reason.", field="reason")
    draft = draft_transition(draft=draft, to_status=S.REVIEWING, actor=actor, via="manual")
    Review.objects.record(draft, kind=ReviewKind.MANUAL, reviewer=actor, decision=ReviewDecision.REJECT, reason=reason)
    return draft_transition(draft=draft, to_status=S.REVIEW_REJECTED, actor=actor, via="manual", reason=reason)
