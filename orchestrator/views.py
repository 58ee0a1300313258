from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from core.access import OPERATOR, has_scopes
from orchestrator.choices import Autonomy


@login_required
@ensure_csrf_cookie
def plans_page(request: HttpRequest) -> HttpResponse:
    """The Plans page: a shell plans.js fills from /api/v1/aria and /ws/events. The forms that
    create (New plan, Ask the coordinator) are drawn for operators only: the API refuses others.
    The autonomy labels come from the model's choices, so the form and each plan's select agree."""
    autonomy = [{"value": value, "label": str(label)} for value, label in Autonomy.choices]
    context = {
        "can_operate": has_scopes(request.user, (OPERATOR,)),
        "autonomy_choices": autonomy,
        "page_config": {"autonomy": autonomy},
    }
    return render(request, "orchestrator/plans.html", context)
