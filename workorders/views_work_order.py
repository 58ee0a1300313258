"""The work-order page /workorders/<id>/: the order, its RCA (confirmed / corrected), evidence,
assignment, execution actions and completion report. Operators act, approvers read; the page
script (static/workorders/work_order_page.js) calls the execution API and follows the bus."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from core.access import OPERATOR, has_scopes
from core.errors import NotFound
from core.models import Event
from workorders.api_execution import execution_detail
from workorders.views import can_watch

API_PATHS = {
    "detail": "/api/v1/workorders/{id}/execution",
    "roster": "/api/v1/workorders/{id}/roster",
    "codes": "/api/v1/workorders/execution/failure-codes?cell_id={cell}",
    "assign": "/api/v1/workorders/{id}/assign",
    "start": "/api/v1/workorders/{id}/start",
    "hold": "/api/v1/workorders/{id}/hold",
    "cancel": "/api/v1/workorders/{id}/cancel",
    "complete": "/api/v1/workorders/{id}/complete",
    "print": "/workorders/{id}/print",
}


@login_required
@require_GET
def work_order_page(request: HttpRequest, work_order_id: int) -> HttpResponse:
    if not can_watch(request.user):
        return render(request, "workorders/work_order.html", {"can_watch": False}, status=403)
    try:
        detail = execution_detail(work_order_id)
    except NotFound:
        raise Http404("Work order not found.") from None
    context = {
        "can_watch": True,
        "work_order": detail,
        "page_data": {
            "work_order": detail,
            "can_operate": has_scopes(request.user, (OPERATOR,)),
            "paths": API_PATHS,
            "latest_event_id": Event.objects.order_by("-id").values_list("id", flat=True).first() or 0,
        },
    }
    return render(request, "workorders/work_order.html", context)
