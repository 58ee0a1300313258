"""Operators' logbook: entries per cell with text attachments — validated, audited, on the bus.

The logbook is append-only: an entry is never edited; its author may add attachments to it
afterwards (another operator's entry is a 404 to them). Entries are what the agents read with
`workorders.get_logbook_entries` and what the shift handover is drafted from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from core.audit import audit_record
from core.errors import InvalidInput
from core.events import publish
from core.events.contract import _Payload, register_event_type
from sentinel.models import Cell
from workorders.handover_choices import AttachmentMediaType, LogbookCategory
from workorders.models import LogbookAttachment, LogbookEntry
from workorders.shifts import shift_at

MAX_TEXT_CHARS = 4000
MAX_ATTACHMENTS = 5
MAX_ATTACHMENT_NAME = 120
MAX_ATTACHMENT_BYTES = 64 * 1024
# How far back an entry may be dated: an observation written up late (after a weekend, a long
# job) is still a logbook entry up to 30 days on — the window the agents read by default
# (`workorders.get_logbook_entries`, days=30) — while a date years back (1990, 0001-01-01) is a typo
# or a probe, lands in a shift whose handover was signed long ago, and at the calendar's edge
# overflowed the shift computation (a 500).
MAX_BACKDATE = timedelta(days=30)
# How far ahead: clock skew between the operator's device and the server, nothing more.
MAX_CLOCK_SKEW = timedelta(minutes=5)
EVENT_TYPE = "logbook_entry_created"


class LogbookEntryCreated(_Payload):
    """Bus payload (docs/EVENTS.md): a new logbook entry (or an attachment added to one)."""

    entry_id: int
    cell_id: int
    category: str
    author: str
    attachments: int


def register_events() -> None:
    register_event_type(EVENT_TYPE, LogbookEntryCreated)


@dataclass(frozen=True)
class AttachmentIn:
    name: str
    text: str
    media_type: str = AttachmentMediaType.PLAIN


def _clean_text(value: str, field: str, *, limit: int) -> str:
    text = (value or "").strip()
    if not text:
        raise InvalidInput(f"{field}: may not be empty.", field=field)
    if "\x00" in text:
        raise InvalidInput(f"{field}: contains a NUL character.", field=field)
    if len(text) > limit:
        raise InvalidInput(f"{field}: at most {limit} characters ({len(text)} given).", field=field)
    return text


def _check_attachment(attachment: AttachmentIn, prefix: str) -> tuple[str, str, str, int]:
    """`prefix` is where the attachment sits in the caller's body: `attachments.<i>.` in a new
    entry, empty when the body is the attachment itself (POST …/{entry_id}/attachments)."""
    name_field, media_field, text_field = f"{prefix}name", f"{prefix}media_type", f"{prefix}text"
    name = _clean_text(attachment.name, name_field, limit=MAX_ATTACHMENT_NAME)
    if any(ch in name for ch in "/\\") or name.startswith("."):
        raise InvalidInput(f"{name_field}: a plain file name, without folders.", field=name_field)
    if attachment.media_type not in AttachmentMediaType.values:
        raise InvalidInput(f"{media_field}: one of {', '.join(AttachmentMediaType.values)}.", field=media_field)
    text = attachment.text or ""
    if not text.strip():
        raise InvalidInput(f"{text_field}: may not be empty.", field=text_field)
    if "\x00" in text:
        raise InvalidInput(f"{text_field}: contains a NUL character (text attachments only).", field=text_field)
    size = len(text.encode("utf-8"))
    if size > MAX_ATTACHMENT_BYTES:
        raise InvalidInput(f"{text_field}: at most {MAX_ATTACHMENT_BYTES} bytes ({size} given).", field=text_field)
    return name, attachment.media_type, text, size


def _check_attachment_count(total: int) -> None:
    if total > MAX_ATTACHMENTS:
        raise InvalidInput(f"attachments: at most {MAX_ATTACHMENTS} per entry.", field="attachments")


def _author_label(user: AbstractBaseUser) -> str:
    full = getattr(user, "get_full_name", lambda: "")() or ""
    return (full or user.get_username())[:100]


def _announce(entry: LogbookEntry, attachments: int) -> None:
    publish(
        EVENT_TYPE,
        {
            "entry_id": entry.pk,
            "cell_id": entry.cell_id,
            "category": entry.category,
            "author": entry.author,
            "attachments": attachments,
        },
    )


def logbook_entry_create(
    *,
    cell: Cell,
    author: AbstractBaseUser,
    text: str,
    category: str = LogbookCategory.OBSERVATION,
    attachments: Sequence[AttachmentIn] = (),
    time: datetime | None = None,
) -> LogbookEntry:
    """Write one entry (and its attachments) in one transaction; audit it and announce it.

    `time` (when it was observed, default now) lies within [now − 30 days, now + 5 minutes]
    (`MAX_BACKDATE`, `MAX_CLOCK_SKEW`); outside it is a 422 naming `time`."""
    body = _clean_text(text, "text", limit=MAX_TEXT_CHARS)
    if category not in LogbookCategory.values:
        raise InvalidInput(f"category: one of {', '.join(LogbookCategory.values)}.", field="category")
    _check_attachment_count(len(attachments))
    checked = [_check_attachment(a, f"attachments.{i}.") for i, a in enumerate(attachments)]
    moment = time or timezone.now()
    if timezone.is_naive(moment):
        raise InvalidInput("time: needs a time zone.", field="time")
    now = timezone.now()
    # Bounded before the shift is computed: aware comparisons never overflow, local dates can.
    if moment > now + MAX_CLOCK_SKEW:
        raise InvalidInput("time: an entry cannot be written for the future.", field="time")
    if moment < now - MAX_BACKDATE:
        raise InvalidInput(
            f"time: an entry may be dated at most {MAX_BACKDATE.days} days back (not before "
            f"{(now - MAX_BACKDATE).isoformat(timespec='minutes')}).",
            field="time",
        )
    _, shift = shift_at(moment)
    with transaction.atomic():
        entry = LogbookEntry.objects.create(
            cell=cell,
            time=moment,
            author=_author_label(author),
            shift=shift,
            category=category,
            text=body,
            created_by=author,
        )
        LogbookAttachment.objects.bulk_create(
            LogbookAttachment(entry=entry, name=n, media_type=m, text=t, size=s, created_by=author)
            for n, m, t, s in checked
        )
        audit_record(
            actor=author,
            action="logbook.entry_create",
            target_type="workorders.logbook_entry",
            target_id=entry.pk,
            details={
                "cell_tag": cell.tag,
                "category": category,
                "chars": len(body),
                "attachments": [{"name": n, "bytes": s} for n, _, _, s in checked],
            },
        )
        _announce(entry, len(checked))
    return entry


def logbook_attachment_add(
    *, entry: LogbookEntry, actor: AbstractBaseUser, attachment: AttachmentIn
) -> LogbookAttachment:
    """Attach one more text to the caller's own entry (the caller fetched it owner-scoped)."""
    with transaction.atomic():
        locked = LogbookEntry.objects.select_for_update().get(pk=entry.pk)
        already = locked.attachments.count()
        _check_attachment_count(already + 1)
        name, media_type, text, size = _check_attachment(attachment, "")  # the body is the attachment
        row = LogbookAttachment.objects.create(
            entry=locked, name=name, media_type=media_type, text=text, size=size, created_by=actor
        )
        audit_record(
            actor=actor,
            action="logbook.attachment_add",
            target_type="workorders.logbook_entry",
            target_id=locked.pk,
            details={"attachment_id": row.pk, "name": name, "bytes": size},
        )
        _announce(locked, already + 1)
    return row
