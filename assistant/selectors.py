"""Reads that depend on who asks: owner scoping happens here, once."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet

from assistant.choices import DraftStatus as S
from assistant.conf import SESSION_OBJECT_ROOT
from assistant.models import Attachment, Draft, Run, Session
from core.access import APPROVER, get_owned_or_404, has_scopes, is_admin, is_service_account, owned_by
from core.errors import Forbidden, NotFound


def sessions_visible(user: AbstractBaseUser, *, owner_id: int | None = None, archived: bool | None = None) -> QuerySet:
    """The caller's sessions; another owner's list needs admin."""
    qs = Session.objects.select_related("owner")
    if owner_id is not None and owner_id != user.pk:
        if not is_admin(user):
            raise Forbidden("Listing another owner's sessions requires scope: admin.", code="missing_scope")
        qs = qs.filter(owner_id=owner_id)
    else:
        qs = qs.filter(owner=user)
    if archived is not None:
        qs = qs.filter(archived=archived)
    return qs


def session_get(user: AbstractBaseUser, session_id: int) -> Session:
    return get_owned_or_404(Session.objects.select_related("owner"), user, pk=session_id)


def session_owned(user: AbstractBaseUser, session_id: int) -> Session:
    """The caller's own session, admins included (no bypass): what changes how its turns act —
    tool_approval, skill pin/disable — is its owner's alone, like its held tool calls."""
    session = Session.objects.select_related("owner").filter(pk=session_id, owner_id=user.pk).first()
    if session is None:
        raise NotFound("Session not found.")
    return session


def drafts_visible(user: AbstractBaseUser) -> QuerySet:
    return owned_by(Draft.objects.select_related("owner"), user)


def drafts_for_review(user: AbstractBaseUser) -> QuerySet:
    """What an approver may act on: others' drafts that are tested, approved or failed to publish."""

    waiting = (S.TESTED, S.APPROVED, S.PUBLISH_FAILED)
    return Draft.objects.select_related("owner").filter(status__in=waiting).exclude(owner=user).order_by("-updated")


# A draft's author submits it for review by testing it: from `tested` on it is in (or has been
# through) the approvers' queue. Before that it is the author's work in progress.
SUBMITTED = frozenset(S) - {S.DRAFT, S.VALIDATING, S.VALIDATED, S.VALIDATION_FAILED, S.TESTING, S.TEST_FAILED}


def draft_get(user: AbstractBaseUser, draft_id: int, *, for_review: bool = False) -> Draft:
    """Owner-scoped; approvers (and the reviewer and release principals) also see others' drafts
    once submitted for review, because approving them is their job. Another author's draft not yet
    submitted is a 404 to them, as to anyone: it is not theirs to read or act on. Admins see all."""

    qs = Draft.objects.select_related("owner")
    if for_review and not is_admin(user) and (has_scopes(user, [APPROVER]) or is_service_account(user)):
        draft = qs.filter(Q(owner_id=user.pk) | Q(status__in=SUBMITTED), pk=draft_id).first()
        if draft is None:
            raise NotFound("Draft not found.")
        return draft
    return get_owned_or_404(qs, user, pk=draft_id)


def run_get(user: AbstractBaseUser, run_id: int) -> Run:
    return get_owned_or_404(Run.objects.select_related("session"), user, owner_field="session__owner", pk=run_id)


def attachment_owned(user: AbstractBaseUser, attachment_id: int) -> Attachment:
    """An attachment of the caller's own session (admins included, no bypass): what a session's
    turns read is its owner's to change."""
    attachment = Attachment.objects.filter(pk=attachment_id, session__owner_id=user.pk).first()
    if attachment is None:
        raise NotFound("Attachment not found.")
    return attachment


def _canonical_id(text: str) -> bool:
    """ASCII digits as str(pk) writes them: no sign, no leading zero, no other script's digits."""
    return text.isascii() and text.isdigit() and str(int(text)) == text


def object_key_visible(user: AbstractBaseUser, key: str, *, shared_prefix: str = "") -> bool:
    """Whether a storage key (already checked for traversal) is one the caller may attach: under
    one of their own sessions (`assistant/<session id>/…`), under the admin-configured shared
    library prefix, or anything for an admin."""
    if is_admin(user):
        return True
    parts = key.split("/")
    if shared_prefix and parts[: len(shared_prefix.split("/"))] == shared_prefix.split("/"):
        return len(parts) > len(shared_prefix.split("/"))
    if len(parts) < 3 or parts[0] != SESSION_OBJECT_ROOT or not _canonical_id(parts[1]):
        return False
    return Session.objects.filter(pk=int(parts[1]), owner=user).exists()
