"""The alarm-performance page (/alarms/performance/): a static shell that performance.js fills from
/api/v1/alarm-performance; operators and approvers see it (the API checks the same scopes)."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from core.access import APPROVER, OPERATOR, user_scopes
from sentinel.choices import AlarmState


@login_required
@ensure_csrf_cookie
def alarm_performance_page(request: HttpRequest) -> HttpResponse:
    scopes = user_scopes(request.user)
    if not scopes & {OPERATOR, APPROVER}:
        raise PermissionDenied("Alarm performance is for operators and approvers.")
    # The alarm states in the model's words ("Active, unacknowledged"), for the lists that name one.
    state_labels = {value: str(label) for value, label in AlarmState.choices}
    # Drafting a plan (POST /api/v1/aria/plans) needs the operator scope: an approver reads the
    # suggestions without a button the API would refuse.
    context = {"state_labels": state_labels, "can_plan": OPERATOR in scopes}
    return render(request, "sentinel/performance.html", context)
