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
    The autonomy labels come from the model's choices, so the form and each plan's select agree.
    Without the operator scope plans.js draws no plan or step moves either (an owner whose scope was
    removed read buttons the API then refused with 403); answering asks stays."""
    autonomy = [{"value": value, "label": str(label)} for value, label in Autonomy.choices]
    can_operate = has_scopes(request.user, (OPERATOR,))
    context = {
        "can_operate": can_operate,
        "autonomy_choices": autonomy,
        "page_config": {"autonomy": autonomy, "can_operate": can_operate},
    }
    return render(request, "orchestrator/plans.html", context)
