"""The logbook and shift handovers over HTTP, mounted inside the workorders router at
/api/v1/workorders/shift/logbook… and /api/v1/workorders/shift/handovers… (a two-segment path, so
the work-order routes' `/{work_order_id}` never swallows them)."""

from __future__ import annotations

from datetime import date as Date
from datetime import datetime
from typing import Any, Literal

from django.http import HttpRequest
from ninja import Query, Router, Schema
from ninja.responses import Status
from pydantic import Field

from core.access import APPROVER, OPERATOR, get_owned_or_404, require_any_scope, require_scopes
from core.agents.engines import get_engine
from core.json_types import NOT_BLANK, STRIPPED_CHAR, TEXT_END, BodyRowId, RowId, not_blank_text
from core.request_limits import MAX_PAGE_OFFSET
from core.throttling import CHAT, UserRateLimit, token_budget_check
from workorders import selectors
from workorders.models import LogbookEntry
from workorders.services.handover import (
    MAX_REPORT_CHARS,
    handover_acknowledge,
    handover_draft,
    handover_edit,
    handover_sign,
)
from workorders.services.logbook import (
    MAX_ATTACHMENT_BYTES,
    MAX_ATTACHMENTS,
    MAX_TEXT_CHARS,
    AttachmentIn,
    logbook_attachment_add,
    logbook_entry_create,
)
from workorders.shift_selectors import (
    handover_as_dict,
    handover_get,
    handovers_search,
    logbook_attachment_get,
    logbook_entries,
    logbook_entry_as_dict,
)

router = Router(tags=["logbook and shift handover"])

CategoryName = Literal["observation", "maintenance", "safety", "production", "handover"]
MediaTypeName = Literal["text/plain", "text/markdown", "text/csv", "application/json"]
ShiftName = Literal["morning", "afternoon", "night"]
HandoverStatusName = Literal["draft", "signed", "acknowledged"]


# A plain file name as the service checks it once stripped (workorders.services.logbook): no folder
# (no slash or backslash), not hidden (no leading "."); not blank is NOT_BLANK beside it.
PLAIN_FILE_NAME = rf"^(?!{STRIPPED_CHAR}*\.)[^/\\]*{TEXT_END}"


class AttachmentSchema(Schema):
    name: str = Field(
        min_length=1,
        max_length=120,
        description="A plain file name, e.g. readings.csv.",
        json_schema_extra={"pattern": PLAIN_FILE_NAME, "allOf": [{"pattern": NOT_BLANK}]},
    )
    media_type: MediaTypeName = "text/plain"
    text: str = not_blank_text(MAX_ATTACHMENT_BYTES, description="The text (UTF-8, ≤ 64 KiB).")


class LogbookEntryIn(Schema):
    cell_id: BodyRowId = Field()
    text: str = not_blank_text(MAX_TEXT_CHARS)
    category: CategoryName = "observation"
    time: datetime | None = Field(
        default=None,
        description="When it was observed, with a time zone; default now. At most 30 days back and 5 minutes ahead.",
    )
    attachments: list[AttachmentSchema] = Field(default_factory=list, max_length=MAX_ATTACHMENTS)


class HandoverDraftIn(Schema):
    date: Date | None = Field(
        default=None,
        description="The date the shift starts on, within the last 7 days; with shift, or neither.",
    )
    shift: ShiftName | None = Field(default=None, description="Default: the current shift.")


class HandoverEditIn(Schema):
    report: str = not_blank_text(MAX_REPORT_CHARS)


class HandoverAcknowledgeIn(Schema):
    comment: str = Field(default="", max_length=500)


def _attachment(item: AttachmentSchema) -> AttachmentIn:
    return AttachmentIn(name=item.name, text=item.text, media_type=item.media_type)


# --- logbook ----------------------------------------------------------------------------------


@router.get("/logbook")
def list_logbook(
    request: HttpRequest,
    cell_id: RowId | None = None,
    category: CategoryName | None = None,
    q: str = Query("", max_length=200, description="Words that must all appear (text, author, attachments)."),
    limit: int = Query(30, ge=1, le=100),
    offset: int = Query(0, ge=0, le=MAX_PAGE_OFFSET),
) -> dict[str, Any]:
    require_any_scope(request.user, OPERATOR, APPROVER)
    if cell_id is not None:
        selectors.get_cell(cell_id)  # 404 for an unknown cell
    qs = logbook_entries(cell_id=cell_id, category=category, query=q)
    items = [logbook_entry_as_dict(e, viewer=request.user) for e in qs[offset : offset + limit]]
    return {"count": qs.count(), "items": items}


@router.post("/logbook", response={201: dict})
def create_logbook_entry(request: HttpRequest, payload: LogbookEntryIn) -> Status:
    require_scopes(request.user, OPERATOR)
    cell = selectors.get_cell(payload.cell_id)
    entry = logbook_entry_create(
        cell=cell,
        author=request.user,
        text=payload.text,
        category=payload.category,
        time=payload.time,
        attachments=[_attachment(a) for a in payload.attachments],
    )
    return Status(201, logbook_entry_as_dict(logbook_entries().get(pk=entry.pk), viewer=request.user))


@router.post("/logbook/{entry_id}/attachments", response={201: dict})
def add_logbook_attachment(request: HttpRequest, entry_id: int, payload: AttachmentSchema) -> Status:
    require_scopes(request.user, OPERATOR)
    # Only the entry's author adds to it: anyone else's entry is a 404 here (admins bypass).
    entry = get_owned_or_404(LogbookEntry.objects.all(), request.user, owner_field="created_by", pk=entry_id)
    logbook_attachment_add(entry=entry, actor=request.user, attachment=_attachment(payload))
    return Status(201, logbook_entry_as_dict(logbook_entries().get(pk=entry.pk), viewer=request.user))


@router.get("/logbook/attachments/{attachment_id}")
def get_logbook_attachment(request: HttpRequest, attachment_id: int) -> dict[str, Any]:
    require_any_scope(request.user, OPERATOR, APPROVER)
    a = logbook_attachment_get(attachment_id)
    return {
        "id": a.pk,
        "entry_id": a.entry_id,
        "cell_tag": a.entry.cell.tag,
        "name": a.name,
        "media_type": a.media_type,
        "size": a.size,
        "text": a.text,
    }


# --- shift handovers ----------------------------------------------------------------------------


@router.get("/handovers")
def list_handovers(
    request: HttpRequest,
    q: str = Query("", max_length=200, description="Words that must all appear in the report or names."),
    status: HandoverStatusName | None = None,
    limit: int = Query(20, ge=1, le=100),
    offset: int = Query(0, ge=0, le=MAX_PAGE_OFFSET),
) -> dict[str, Any]:
    require_any_scope(request.user, OPERATOR, APPROVER)
    qs = handovers_search(request.user, query=q, status=status)
    items = [handover_as_dict(h, viewer=request.user) for h in qs[offset : offset + limit]]
    return {"count": qs.count(), "items": items}


@router.post("/handovers", response={201: dict}, throttle=UserRateLimit(CHAT))
def draft_handover(request: HttpRequest, payload: HandoverDraftIn | None = None) -> Status:
    """The Shift Handover agent drafts the report of a shift (default: the current one)."""
    require_scopes(request.user, OPERATOR)
    engine = get_engine()
    token_budget_check(request.user, provider=engine.provider)
    payload = payload or HandoverDraftIn()
    handover = handover_draft(actor=request.user, date=payload.date, shift=payload.shift, engine=engine)
    return Status(201, handover_as_dict(handover_get(request.user, handover.pk), viewer=request.user))


@router.get("/handovers/{handover_id}")
def get_handover(request: HttpRequest, handover_id: int) -> dict[str, Any]:
    require_any_scope(request.user, OPERATOR, APPROVER)
    return handover_as_dict(handover_get(request.user, handover_id), viewer=request.user)


@router.patch("/handovers/{handover_id}")
def edit_handover(request: HttpRequest, handover_id: int, payload: HandoverEditIn) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)
    handover_edit(handover=handover_get(request.user, handover_id), actor=request.user, report=payload.report)
    return handover_as_dict(handover_get(request.user, handover_id), viewer=request.user)


@router.post("/handovers/{handover_id}/sign")
def sign_handover(request: HttpRequest, handover_id: int) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)
    handover_sign(handover=handover_get(request.user, handover_id), actor=request.user)
    return handover_as_dict(handover_get(request.user, handover_id), viewer=request.user)


@router.post("/handovers/{handover_id}/acknowledge")
def acknowledge_handover(
    request: HttpRequest, handover_id: int, payload: HandoverAcknowledgeIn | None = None
) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)
    comment = payload.comment if payload is not None else ""
    handover_acknowledge(handover=handover_get(request.user, handover_id), actor=request.user, comment=comment)
    return handover_as_dict(handover_get(request.user, handover_id), viewer=request.user)
