"""The alarm-performance page (/alarms/performance/): a static shell that performance.js fills from
/api/v1/alarm-performance; operators and approvers see it (the API checks the same scopes)."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from core.access import APPROVER, OPERATOR, user_scopes


@login_required
@ensure_csrf_cookie
def alarm_performance_page(request: HttpRequest) -> HttpResponse:
    if not user_scopes(request.user) & {OPERATOR, APPROVER}:
        raise PermissionDenied("Alarm performance is for operators and approvers.")
    return render(request, "sentinel/performance.html")
