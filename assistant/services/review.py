"""Agent review: the reviewer principal judges the candidate alone; every doubt fails closed.

Before anything runs, the same readiness the config route shows is enforced here: approval
policy, reviewer/release service principals distinct from the author, and a reviewer engine that
is a real provider. If any is missing the review is refused with the reason recorded (a failed
Review row and an audit record) and the draft stays `tested`, awaiting a human approver."""

from __future__ import annotations

import json
from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from pydantic import ValidationError

from assistant.agents.reviewer import SubmitReview, candidate_message, reviewer_spec
from assistant.choices import DRAFT_TRANSITIONS, ApprovalPolicy, DraftStatus, ReviewDecision, ReviewKind
from assistant.conf import get_config
from assistant.engines import reviewer_engine
from assistant.models import Draft, Review
from assistant.services.drafts import draft_transition
from assistant.services.principals import review_principals
from assistant.services.publish import draft_publish
from core.agents.engines import Engine
from core.agents.loop import run_agent
from core.audit import audit_record
from core.capabilities import CapabilityContext
from core.errors import Conflict, Forbidden
from core.throttling import token_budget_check

S = DraftStatus


def _fail(draft: Draft, actor, reviewer, reason: str, **extra) -> Draft:
    Review.objects.record(
        draft, kind=ReviewKind.AGENT, reviewer=reviewer, decision=ReviewDecision.FAILED, reason=reason, **extra
    )
    return draft_transition(draft=draft, to_status=S.REVIEW_FAILED, actor=actor, reason=reason)


def _refuse(draft: Draft, actor: AbstractBaseUser, reviewer, reason: str) -> Draft:
    """Not ready for an agent review: record why, leave the candidate for a human approver."""
    with transaction.atomic():
        draft = Draft.objects.select_for_update().get(pk=draft.pk)
        if draft.status != S.TESTED:  # the same refusal the lifecycle gives for a review
            allowed = sorted(DRAFT_TRANSITIONS[draft.status])
            raise Conflict(f"Cannot move a {draft.status} draft to reviewing.", allowed=allowed, status=draft.status)
        review = Review.objects.record(
            draft,
            kind=ReviewKind.AGENT,
            reviewer=reviewer,
            decision=ReviewDecision.FAILED,
            reason=f"agent review refused: {reason}",
        )
        audit_record(
            actor=actor,
            action="draft.review_refused",
            target_type="assistant.draft",
            target_id=draft.pk,
            details={"review_id": review.pk, "reason": review.reason, "status": draft.status},
        )
    return draft


def _parse_decision(result) -> tuple[SubmitReview | None, str]:
    if result.finish_reason == "error" or (result.finish_reason not in ("finish_tool", "end_turn")):
        return None, f"provider error: {result.run.error or result.finish_reason}"
    raw = result.output
    if raw is None:
        try:
            raw = json.loads(result.text)
        except (TypeError, ValueError):
            return None, "invalid JSON: the reviewer did not return a structured decision."
    try:
        return SubmitReview.model_validate(raw), ""
    except ValidationError as exc:
        return None, f"invalid JSON: {exc.errors()[0]['msg']}"


def draft_agent_review(*, draft: Draft, actor: AbstractBaseUser, engine: Engine | None = None) -> Draft:
    """tested → reviewing → approved | review_rejected | review_failed (fail closed, reason
    recorded); not ready (policy, principals, offline reviewer) → stays tested, reason recorded.

    `engine` stands in for the configured reviewer's provider (tests); the configured reviewer
    must still be a real provider."""
    if actor.pk != draft.owner_id and not getattr(actor, "is_superuser", False):
        raise Forbidden("Only the draft's author requests its review.", code="forbidden")
    config = get_config()
    principals = review_principals(config, author=draft.owner)
    if not principals.ready:
        return _refuse(draft, actor, principals.reviewer, "; ".join(principals.problems))
    try:
        engine = engine or reviewer_engine(config)
    except Exception as exc:
        engine, engine_error = None, exc
    else:  # the author asks for the review, so the author's daily budget pays for it (429, no review)
        token_budget_check(actor, provider=engine.provider)
    draft = draft_transition(draft=draft, to_status=S.REVIEWING, actor=actor, via="agent_review")
    hash_seen, version_seen = draft.content_hash, draft.version
    if engine is None:
        return _fail(draft, actor, principals.reviewer, f"provider error: {engine_error}")
    result = run_agent(
        reviewer_spec(config.run_timeout_seconds),
        messages=candidate_message(draft, config.review_policy_version),
        ctx=CapabilityContext(user=principals.reviewer),
        engine=engine,
        subject=("assistant.draft", draft.pk),
        billed_to=actor,
    )
    decision, problem = _parse_decision(result)
    if decision is None:
        return _fail(draft, actor, principals.reviewer, problem)
    extra = {"confidence": decision.confidence, "policy_version": decision.policy_version}
    if decision.policy_version != config.review_policy_version:
        reason = f"policy version mismatch: got {decision.policy_version!r}, need {config.review_policy_version!r}."
        return _fail(draft, actor, principals.reviewer, reason, **extra)
    if decision.confidence < config.review_confidence_floor:
        reason = f"low confidence: {decision.confidence:.2f} < floor {config.review_confidence_floor:.2f}."
        return _fail(draft, actor, principals.reviewer, reason, **extra)
    current = Draft.objects.get(pk=draft.pk)
    if (current.content_hash, current.version) != (hash_seen, version_seen) or current.compute_hash() != hash_seen:
        return _fail(draft, actor, principals.reviewer, "candidate drift: the draft changed during review.", **extra)
    review = Review.objects.record(
        draft,
        kind=ReviewKind.AGENT,
        reviewer=principals.reviewer,
        decision=ReviewDecision.APPROVE if decision.decision == "approve" else ReviewDecision.REJECT,
        reason=decision.reason,
        candidate_hash=hash_seen,
        candidate_version=version_seen,
        expires_at=timezone.now() + timedelta(seconds=config.review_ttl_seconds),
        **extra,
    )
    if review.decision == ReviewDecision.REJECT:
        return draft_transition(
            draft=draft, to_status=S.REVIEW_REJECTED, actor=principals.reviewer, reason=decision.reason
        )
    draft = draft_transition(draft=draft, to_status=S.APPROVED, actor=principals.reviewer, via="agent_review")
    audit_record(
        actor=principals.reviewer,
        action="draft.approve",
        target_type="assistant.draft",
        target_id=draft.pk,
        details={"via": "agent_review", "review_id": review.pk, "confidence": decision.confidence},
    )
    if config.approval_policy == ApprovalPolicy.FULL_AUTONOMY:
        draft = draft_publish(draft=draft, actor=principals.release)
    return draft
