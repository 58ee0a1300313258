"""The Ask ARIA workspace page (the drawer, opened, on a page of its own) and the intent workbench."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from assistant.intents import INTENTS
from core.access import OPERATOR, has_scopes


@login_required
def ask_page(request: HttpRequest) -> HttpResponse:
    return render(request, "assistant/page.html", {"title": "Ask ARIA"})


@login_required
def workbench_page(request: HttpRequest) -> HttpResponse:
    """Type what to create → resolved intent and slots → the planned draft → confirm → the result.
    The page script (static/assistant/workbench.js) calls the workbench API; operators only."""
    can_use = has_scopes(request.user, (OPERATOR,))
    context = {
        "can_use": can_use,
        "page_data": {"intents": sorted(INTENTS), "api": "/api/v1/assistant"},
    }
    return render(request, "assistant/workbench.html", context, status=200 if can_use else 403)
