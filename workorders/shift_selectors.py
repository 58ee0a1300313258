"""Reads of the logbook and shift handovers that depend on who asks.

A handover draft is its author's until signed: another operator gets a 404 for it; signed and
acknowledged reports are the plant's record and everyone with a scope reads them. Admins see all.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Prefetch, Q, QuerySet

from core.access import is_admin
from core.errors import InvalidInput, NotFound
from workorders.handover_choices import PUBLISHED_HANDOVER_STATUSES, HandoverStatus, handover_allowed_transitions
from workorders.models import LogbookAttachment, LogbookEntry, ShiftHandover
from workorders.services.logbook import MAX_ATTACHMENTS

MAX_SEARCH_TERMS = 8


def search_terms(query: str, *, field: str = "q") -> list[str]:
    """Whitespace-separated words, each of which must match (bounded: ≤ 8 terms)."""
    terms = [t for t in (query or "").split() if t]
    if len(terms) > MAX_SEARCH_TERMS:
        raise InvalidInput(f"{field}: at most {MAX_SEARCH_TERMS} words.", field=field)
    return terms


def logbook_entries(*, cell_id: int | None = None, category: str | None = None, query: str = "") -> QuerySet:
    # The list shows attachment names and sizes; their text is fetched one at a time.
    headers = LogbookAttachment.objects.only("id", "entry_id", "name", "media_type", "size").order_by("id")
    qs = LogbookEntry.objects.select_related("cell").prefetch_related(Prefetch("attachments", queryset=headers))
    if cell_id is not None:
        qs = qs.filter(cell_id=cell_id)
    if category:
        qs = qs.filter(category=category)
    for term in search_terms(query):
        qs = qs.filter(Q(text__icontains=term) | Q(author__icontains=term) | Q(attachments__text__icontains=term))
    return qs.distinct().order_by("-time", "-id")


def logbook_entry_as_dict(entry: LogbookEntry, *, viewer: AbstractBaseUser | None = None) -> dict[str, Any]:
    """`can_attach`: the viewer wrote it and it has room for another text (the service decides again)."""
    attachments = list(entry.attachments.all())
    return {
        "id": entry.pk,
        "cell_id": entry.cell_id,
        "cell_tag": entry.cell.tag,
        "time": entry.time.isoformat(),
        "author": entry.author,
        "shift": entry.shift,
        "category": entry.category,
        "text": entry.text,
        "attachments": [{"id": a.pk, "name": a.name, "media_type": a.media_type, "size": a.size} for a in attachments],
        "can_attach": bool(
            viewer is not None
            and entry.created_by_id is not None
            and entry.created_by_id == viewer.pk
            and len(attachments) < MAX_ATTACHMENTS
        ),
    }


def logbook_attachment_get(attachment_id: int) -> LogbookAttachment:
    found = LogbookAttachment.objects.select_related("entry__cell").filter(pk=attachment_id).first()
    if found is None:
        raise NotFound(f"Logbook attachment {attachment_id} not found.")
    return found


def handovers_visible(user: AbstractBaseUser) -> QuerySet:
    qs = ShiftHandover.objects.select_related("outgoing", "incoming")
    if is_admin(user):
        return qs
    return qs.filter(Q(status__in=PUBLISHED_HANDOVER_STATUSES) | Q(outgoing_id=user.pk))


def handover_get(user: AbstractBaseUser, handover_id: int) -> ShiftHandover:
    found = handovers_visible(user).filter(pk=handover_id).first()
    if found is None:
        raise NotFound(f"Handover {handover_id} not found.")
    return found


def handovers_search(user: AbstractBaseUser, *, query: str = "", status: str | None = None) -> QuerySet:
    """Handovers the user may read, newest shift first; every word of `query` must appear in the
    report, the incoming operator's comment or a name."""
    qs = handovers_visible(user)
    if status:
        qs = qs.filter(status=status)
    for term in search_terms(query):
        qs = qs.filter(
            Q(report__icontains=term)
            | Q(acknowledge_comment__icontains=term)
            | Q(outgoing__username__icontains=term)
            | Q(incoming__username__icontains=term)
        )
    return qs.order_by("-period_end", "-id")


def handover_as_dict(handover: ShiftHandover, *, viewer: AbstractBaseUser | None = None) -> dict[str, Any]:
    mine = viewer is not None and handover.outgoing_id == viewer.pk
    status = handover.status
    return {
        "id": handover.pk,
        "date": handover.date.isoformat(),
        "shift": handover.shift,
        "period_start": handover.period_start.isoformat(),
        "period_end": handover.period_end.isoformat(),
        "status": status,
        "outgoing": handover.outgoing.get_username(),
        "incoming": handover.incoming.get_username() if handover.incoming else None,
        "report": handover.report,
        "draft_report": handover.draft_report,
        "sections": handover.sections,
        "drafted_by": handover.drafted_by,
        "drafted_offline": handover.drafted_offline,
        "agent_run_id": handover.agent_run_id,
        "revision": handover.revision,
        "signed_at": handover.signed_at.isoformat() if handover.signed_at else None,
        "acknowledged_at": handover.acknowledged_at.isoformat() if handover.acknowledged_at else None,
        "acknowledge_comment": handover.acknowledge_comment,
        "allowed_transitions": handover_allowed_transitions(status),
        # What this viewer may do (the services decide again; this only shapes the page).
        "can_edit": mine and status == HandoverStatus.DRAFT,
        "can_sign": mine and status == HandoverStatus.DRAFT,
        "can_acknowledge": viewer is not None and not mine and status == HandoverStatus.SIGNED,
    }
