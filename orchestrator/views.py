from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie


@login_required
@ensure_csrf_cookie
def plans_page(request: HttpRequest) -> HttpResponse:
    """The Plans page: static shell; plans.js fills it from /api/v1/aria and /ws/events."""
    return render(request, "orchestrator/plans.html")
