"""The Shift page (/shift/): the operators' logbook per cell and the shift handover
(draft → edit → sign; the incoming operator acknowledges). The page renders once; shift.js fills
and updates it from the logbook/handover API and the event bus (`logbook_entry_created`,
`handover_updated`)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET

from core.access import APPROVER, OPERATOR, has_scopes, user_scopes
from core.models import Event
from sentinel.models import Cell
from workorders.handover_choices import AttachmentMediaType, LogbookCategory
from workorders.shifts import next_shift, shift_at, shift_window

API_PATHS = {
    "logbook": "/api/v1/workorders/shift/logbook",
    "attachment": "/api/v1/workorders/shift/logbook/attachments/{id}",
    "handovers": "/api/v1/workorders/shift/handovers",
    "handover": "/api/v1/workorders/shift/handovers/{id}",
}


@login_required
@ensure_csrf_cookie
@require_GET
def shift_page(request: HttpRequest) -> HttpResponse:
    user = request.user
    can_read = bool(user_scopes(user) & {OPERATOR, APPROVER})
    day, shift = shift_at(timezone.now())
    start, end = shift_window(day, shift)
    following_day, following = next_shift(day, shift)
    config = {
        "api": API_PATHS,
        "me": user.get_username(),
        "can_read": can_read,
        "can_write": has_scopes(user, (OPERATOR,)),
        "cells": list(Cell.objects.order_by("tag").values("id", "tag", "name")) if can_read else [],
        "categories": [{"value": v, "label": str(label)} for v, label in LogbookCategory.choices],
        "media_types": list(AttachmentMediaType.values),
        "shift": {
            "date": day.isoformat(),
            "shift": shift,
            "start": start.isoformat(),
            "end": end.isoformat(),
            "next": f"{following} {following_day.isoformat()}",
        },
        "latest_event_id": Event.objects.order_by("-id").values_list("id", flat=True).first() or 0,
    }
    return render(request, "workorders/shift.html", {"config": config, "can_read": can_read})
