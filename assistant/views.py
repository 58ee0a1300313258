"""The Ask ARIA workspace page (the drawer, opened, on a page of its own) and the intent workbench."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from assistant.intents import INTENTS
from assistant.models import Operation
from core.access import OPERATOR, has_scopes


@login_required
def ask_page(request: HttpRequest) -> HttpResponse:
    return render(request, "assistant/page.html", {"title": "Ask ARIA"})


@login_required
def workbench_page(request: HttpRequest) -> HttpResponse:
    """Type what to create → resolved intent and slots → the planned draft → confirm → the result.
    The page script (static/assistant/workbench.js) calls the workbench API; operators only."""
    can_use = has_scopes(request.user, (OPERATOR,))
    # Where a planned operation waits (plans/latest answers 404 elsewhere, which the browser logs as
    # a console error): the page asks for it only in those scopes. "" = no session (any of the user's).
    waiting = (
        Operation.objects.filter(owner_id=request.user.pk, status=Operation.Status.PLANNED)
        .values_list("session_id", flat=True)
        .distinct()
        if can_use
        else []
    )
    planned_in = sorted({"", *(str(s) for s in waiting if s is not None)}) if waiting else []
    context = {
        "can_use": can_use,
        "page_data": {"intents": sorted(INTENTS), "api": "/api/v1/assistant", "planned_in": planned_in},
    }
    return render(request, "assistant/workbench.html", context, status=200 if can_use else 403)
