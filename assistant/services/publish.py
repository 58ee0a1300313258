"""Publish: re-check everything about the approval, then make the artifact live, versioned.

An agent's approval is only worth what the governance settings allow right now: the policy must
still be agent_review/full_autonomy, the principals ready and distinct from the author, and the
reviewer engine a real provider (the same readiness the config route shows); a release principal
publishes only under full_autonomy."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from assistant.choices import ApprovalPolicy, DraftStatus, ReviewDecision, ReviewKind
from assistant.conf import get_config
from assistant.models import Draft, PromptAlias, PromptVersion, PublishedArtifact, Review
from assistant.publishers import publish_artifact
from assistant.services.drafts import AUDIT_TARGET, draft_transition
from assistant.services.principals import review_principals
from core.access import APPROVER, has_scopes, is_service_account
from core.audit import audit_record
from core.errors import Conflict, Forbidden, NotFound
from core.models import AuditRecord, ServiceAccount

S = DraftStatus


def _publisher_refusal(actor: AbstractBaseUser) -> Forbidden | None:
    """Who may publish at all: a human approver or the configured release principal (the author aside)."""
    config = get_config()
    is_release = (
        bool(config.release_username)
        and actor.get_username() == config.release_username
        and ServiceAccount.objects.filter(user=actor, role=ServiceAccount.Role.RELEASE).exists()
    )
    if is_release and not has_scopes(actor, [APPROVER]) and config.approval_policy != ApprovalPolicy.FULL_AUTONOMY:
        return Forbidden(
            "The release principal publishes only under approval_policy full_autonomy.", code="approval_policy"
        )
    if not (has_scopes(actor, [APPROVER]) or is_release):
        return Forbidden("Publishing requires scope approver or the release principal.", code="missing_scope")
    return None


def _publish_refusal(
    draft: Draft, actor: AbstractBaseUser, review: Review | None, who: Forbidden | None
) -> Forbidden | None:
    """Why `actor` may not publish `draft` (None: they may): never the author; then `who`
    (_publisher_refusal, the same for every draft); then the approver who approved it."""
    if actor.pk == draft.owner_id:
        return Forbidden(
            "Separation of duties: the author cannot publish their own draft.", code="separation_of_duties"
        )
    if who is not None:
        return who
    separation = _separation_problem(draft, actor, review)
    if separation:
        return Forbidden(f"Separation of duties: {separation}", code="separation_of_duties")
    return None


def _latest_review(draft: Draft) -> Review | None:
    return draft.reviews.filter(cleared=False).order_by("-id").first()


def _separation_problem(draft: Draft, actor: AbstractBaseUser, review: Review | None) -> str:
    """Who approved may not publish, and the author approves nothing: checked before any move."""
    if review is None:
        return ""
    if review.reviewer_id is None or review.reviewer_id == draft.owner_id:
        return "shared identities: the approval was not given by someone other than the author."
    if review.reviewer_id == actor.pk:
        return "shared identities: the reviewer cannot also publish; another approver or the release principal does."
    return ""


def _approval_problem(draft: Draft, actor: AbstractBaseUser) -> str:
    """Why this candidate may not go live, or "" — status, review row, hash/version, identities, expiry."""
    review = _latest_review(draft)
    if review is None or review.decision != ReviewDecision.APPROVE:
        return "no approving review for this candidate."
    current_hash = draft.compute_hash()
    if current_hash != draft.content_hash or review.candidate_hash != current_hash:
        return "candidate drift: the content hash differs from the approved candidate."
    if review.candidate_version != draft.version:
        return "candidate drift: the version differs from the approved candidate."
    separation = _separation_problem(draft, actor, review)
    if separation:
        return separation
    if review.expires_at is not None and review.expires_at <= timezone.now():
        return "review expired."
    if review.kind == ReviewKind.AGENT:
        config = get_config()
        if config.approval_policy == ApprovalPolicy.MANUAL:
            return "an agent review needs approval_policy agent_review or full_autonomy."
        if has_scopes(actor, [APPROVER]) and not is_service_account(actor):
            config = config.model_copy(update={"approval_policy": ApprovalPolicy.AGENT_REVIEW})  # a human releases
        principals = review_principals(config, author=draft.owner)
        if not principals.ready:
            return "agent approval not valid now: " + "; ".join(principals.problems)
        if principals.reviewer is None or principals.reviewer.pk != review.reviewer_id:
            return "the reviewing principal is no longer the configured reviewer."
    return ""


PUBLISHABLE = (S.APPROVED, S.PUBLISH_FAILED)


def draft_publish(*, draft: Draft, actor: AbstractBaseUser) -> Draft:
    """approved | publish_failed → publishing → published | publish_failed (reason recorded, audited).

    Who may publish (scope, author, the approver who approved) is decided before any move: a
    refusal is a 403 naming the reason and leaves the draft as it was, approval intact. A
    publish_failed draft (e.g. the reviewer engine went offline) is retried once the cause is fixed."""
    draft = Draft.objects.select_related("owner").get(pk=draft.pk)
    if draft.status not in PUBLISHABLE:
        raise Conflict(
            f"Only an approved draft can be published (this one is {draft.status}).",
            allowed=[],
            status=draft.status,
        )
    if actor is None or not actor.is_authenticated:
        raise Forbidden("Publishing requires an authenticated principal.")
    refusal = _publish_refusal(draft, actor, _latest_review(draft), _publisher_refusal(actor))
    if refusal is not None:
        raise refusal
    draft = draft_transition(draft=draft, to_status=S.PUBLISHING, actor=actor)
    problem = _approval_problem(draft, actor)
    if problem:
        return draft_transition(draft=draft, to_status=S.PUBLISH_FAILED, actor=actor, reason=problem)
    try:
        with transaction.atomic():
            artifact = publish_artifact(draft, actor)
            audit_record(
                actor=actor,
                action="draft.publish",
                target_type="assistant.draft",
                target_id=draft.pk,
                details={
                    "artifact_id": artifact.pk,
                    "type": draft.type,
                    "name": draft.name,
                    "version": artifact.version,
                },
            )
    except Exception as exc:  # a failed go-live leaves nothing half-published
        return draft_transition(
            draft=draft, to_status=S.PUBLISH_FAILED, actor=actor, reason=f"{type(exc).__name__}: {exc}"
        )
    return draft_transition(draft=draft, to_status=S.PUBLISHED, actor=actor, artifact_id=artifact.pk)


def draft_publish_refusals(drafts: Iterable[Draft], actor: AbstractBaseUser | None) -> dict[int, str]:
    """{draft id: why `actor` would be refused publishing it, "" when they may} for the approved and
    publish_failed ones among `drafts`: draft_publish's own checks before any move (so a page offers
    Publish exactly to whom the service allows it), in the same few queries however many drafts."""

    publishable = [draft for draft in drafts if draft.status in PUBLISHABLE]
    if not publishable:
        return {}
    if actor is None or not actor.is_authenticated:
        return {draft.pk: "Publishing requires an authenticated principal." for draft in publishable}
    who = _publisher_refusal(actor)
    live = Review.objects.filter(draft__in=[draft.pk for draft in publishable], cleared=False).order_by()
    latest = Review.objects.filter(pk__in=live.values("draft_id").annotate(last=Max("id")).values("last"))
    reviews = {review.draft_id: review for review in latest}
    refusals = {}
    for draft in publishable:
        refusal = _publish_refusal(draft, actor, reviews.get(draft.pk), who)
        refusals[draft.pk] = refusal.message if refusal is not None else ""
    return refusals


WITH_REASON = (S.PUBLISH_FAILED, S.REVIEW_FAILED, S.REVIEW_REJECTED)  # the states a draft shows a reason in


def draft_status_reasons(drafts: Iterable[Draft]) -> dict[int, str]:
    """{draft id: the reason recorded with its latest move} for the failed ones among `drafts`, in
    one query however many they are (none when none failed)."""

    failed = [str(draft.pk) for draft in drafts if draft.status in WITH_REASON]
    if not failed:
        return {}
    moves = AuditRecord.objects.filter(target_type=AUDIT_TARGET, action="draft.transition", target_id__in=failed)
    latest = moves.order_by().values("target_id").annotate(last=Max("id")).values("last")
    rows = AuditRecord.objects.filter(pk__in=latest).values_list("target_id", "details")
    return {int(target_id): str((details or {}).get("reason", "")) for target_id, details in rows}


def draft_status_reason(draft: Draft) -> str:
    """The reason recorded with the draft's latest move (why it failed), or ""."""

    return draft_status_reasons([draft]).get(draft.pk, "")


def prompt_alias_move(*, name: str, version: int, actor: AbstractBaseUser, alias: str = "production") -> PromptAlias:
    """Point an alias at a version (rollback = move it back); audited."""
    if not has_scopes(actor, [APPROVER]):
        raise Forbidden("Moving a prompt alias requires scope: approver.", code="missing_scope")
    try:
        target = PromptVersion.objects.get(name=name, version=version)
    except PromptVersion.DoesNotExist:
        raise NotFound(f"Prompt {name}@v{version} not found.") from None
    with transaction.atomic():
        current = PromptAlias.objects.select_for_update().filter(name=name, alias=alias).first()
        previous = current.version.version if current else None
        row, _ = PromptAlias.objects.update_or_create(name=name, alias=alias, defaults={"version": target})
        audit_record(
            actor=actor,
            action="prompt.alias_move",
            target_type="assistant.prompt_alias",
            target_id=f"{name}:{alias}",
            details={"from_version": previous, "to_version": version},
        )
    return row


def prompt_alias_remove(*, name: str, actor: AbstractBaseUser, alias: str = "production") -> None:
    """Drop an alias: the agent goes back to its built-in prompt (the rollback of a first version,
    which has no earlier version to move to); audited."""
    if not has_scopes(actor, [APPROVER]):
        raise Forbidden("Removing a prompt alias requires scope: approver.", code="missing_scope")
    with transaction.atomic():
        current = PromptAlias.objects.select_for_update().filter(name=name, alias=alias).first()
        if current is None:
            raise NotFound(f"Prompt alias {name}:{alias} not found.")
        previous = current.version.version
        current.delete()
        audit_record(
            actor=actor,
            action="prompt.alias_remove",
            target_type="assistant.prompt_alias",
            target_id=f"{name}:{alias}",
            details={"from_version": previous, "to": "builtin"},
        )


def latest_approval(draft: Draft) -> Review | None:
    return _latest_review(draft)


__all__ = [
    "PublishedArtifact",
    "draft_publish",
    "draft_publish_refusals",
    "draft_status_reason",
    "draft_status_reasons",
    "latest_approval",
    "prompt_alias_move",
    "prompt_alias_remove",
]
