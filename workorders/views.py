"""The maintenance Control Room page and its state snapshot.

The page renders once; `static/workorders/control_room.js` then keeps it live from the event bus
(`/ws/events`) and refetches `control-room/state` (a read-only snapshot of cells, signals, open
alarms and recent work orders) when an event says something changed. Alarm actions go to the
sentinel API, trends come from `/api/v1/signals/{id}/trends`, work orders from the workorders API.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from core.access import APPROVER, OPERATOR, has_scopes, user_scopes
from core.models import Event
from sentinel.choices import AlarmState
from sentinel.models import Alarm, Cell, SignalDefinition
from sentinel.selectors import alarm_suppressions
from sentinel.services.ingest import stale_window
from sentinel.thresholds import signal_state, threshold_values
from workorders import selectors
from workorders.choices import ACTIVE_STATUSES, Priority

# The agent activity feed starts with this many recent bus events (replayed via ?after=).
RECENT_EVENTS = 60
# Every active order (newest first, up to this bound; the page says when there are more: operators
# act on them here, most have no other page), then up to RECENT_CLOSED closed ones.
RECENT_WORK_ORDERS = 50
RECENT_CLOSED = 5
# The annunciated and shelved alarms, newest first, up to RECENT_ALARMS.
SHOWN_ALARM_STATES = (AlarmState.ACTIVE_UNACK, AlarmState.ACKNOWLEDGED, AlarmState.SHELVED)
RECENT_ALARMS = 50
# Out-of-service alarms are listed too, on their own bound (their own section on the page, by cell
# and signal, with how many there are): a hidden alarm stays visible as hidden, with who took it out,
# why and since when — never pushed off by newer active ones, so the operator finds an alarm a
# signal's disabling put out of service once the signal is enabled again, and returns it.
OUT_OF_SERVICE_SHOWN = 200

# Endpoints the page script calls; one place to read them.
API_PATHS = {
    "state": "/control-room/state",
    "trends": "/api/v1/signals/{id}/trends",
    "alarm_acknowledge": "/api/v1/alarms/{id}/acknowledge",
    "alarm_shelve": "/api/v1/alarms/{id}/shelve",
    "alarm_unshelve": "/api/v1/alarms/{id}/unshelve",
    "alarm_put_out_of_service": "/api/v1/alarms/{id}/out-of-service",
    "alarm_return_to_service": "/api/v1/alarms/{id}/return-to-service",
    "work_order": "/api/v1/workorders/{id}",
    "work_order_raise": "/api/v1/workorders",
}


def _signal_row(signal: SignalDefinition, now: datetime) -> dict[str, Any]:
    latest = getattr(signal, "latest", None)
    value = latest.value if latest is not None else None
    # Sentinel flags stale signals of the cells it scans; a cell it does not scan (not onboarded)
    # is judged here by the same rule, so an old value is never shown as current.
    old = latest is not None and now - latest.time > stale_window()
    return {
        "id": signal.pk,
        "key": signal.key,
        "name": signal.display_name,
        "unit": signal.unit,
        "value": value,
        "time": latest.time.isoformat() if latest is not None else None,
        "stale": bool(latest is not None and (latest.stale or old)),
        "state": signal_state(signal, value),
        "thresholds": threshold_values(signal),
    }


def _hidden_fields(alarm: Alarm, why: dict[str, Any] | None) -> dict[str, Any]:
    """Who shelved the alarm (or took it out of service), why and when — `why` is its entry of
    sentinel.selectors.alarm_suppressions, the rule the shift handover reads too (an escalation
    recorded while shelved is not the move); None where it is neither."""
    by = why["by"] if why else None
    reason = why["reason"] if why else None
    since = why["since"] if why else None
    shelved = alarm.state == AlarmState.SHELVED
    out = alarm.state == AlarmState.OUT_OF_SERVICE
    return {
        "shelved_by": by if shelved else None,
        "shelve_reason": reason if shelved else None,
        "shelved_at": since if shelved else None,
        "shelved_until_work_order_closes": bool(shelved and alarm.shelved_until_work_order_closes),
        "out_of_service_by": by if out else None,
        "out_of_service_reason": reason if out else None,
        "out_of_service_since": since if out else None,
    }


def _alarm_row(alarm: Alarm, now: datetime, why: dict[str, Any] | None = None) -> dict[str, Any]:
    signal = alarm.signal
    latest = getattr(signal, "latest", None)
    return {
        "id": alarm.pk,
        "signal_id": signal.pk,
        "signal_name": signal.display_name,
        "unit": signal.unit,
        "cell_id": signal.cell_id,
        "cell_tag": signal.cell.tag,
        "state": alarm.state,
        "severity": alarm.severity,
        "direction": alarm.direction,
        "value": alarm.value,
        "peak_value": alarm.peak_value,
        "threshold_value": alarm.threshold_value,
        "threshold_field": alarm.threshold_field,  # the page shows the signal's current limit of this field
        "raised_at": alarm.raised_at.isoformat(),
        "acknowledged_by": alarm.acknowledged_by.get_username() if alarm.acknowledged_by else None,
        "shelved_until": alarm.shelved_until.isoformat() if alarm.shelved_until else None,
        **_hidden_fields(alarm, why),
        "chattering": alarm.chattering,
        # A disabled signal or a cell off onboarding is not evaluated: its alarm cannot return to service.
        "signal_evaluated": bool(signal.enabled and signal.cell.onboarding_complete),
        # A stale transmitter holds its own alarm (it can neither clear nor escalate): say so on the row.
        "signal_stale": bool(latest is not None and (latest.stale or now - latest.time > stale_window())),
    }


# Who may watch the Control Room (read-only for approvers: supervisors watch it too). Every
# write the page makes (acknowledge, shelve) stays operator-only in the sentinel API.
WATCH_SCOPES = frozenset({OPERATOR, APPROVER})


def can_watch(user: Any) -> bool:
    return bool(user_scopes(user) & WATCH_SCOPES)


EMPTY_SNAPSHOT: dict[str, Any] = {
    "can_operate": False,
    "cells": [],
    "alarms": [],
    "work_orders": [],
    "active_work_orders": 0,
    "out_of_service_alarms": 0,
}


def control_room_snapshot(*, can_operate: bool = True) -> dict[str, Any]:
    """Everything the page draws, in a fixed number of queries (independent of the row counts).
    Operators and approvers, like the sentinel and workorders reads the page also calls;
    `can_operate` (operators only) tells the page to offer the alarm actions."""
    now = timezone.now()
    cells = list(Cell.objects.order_by("tag"))
    signals = SignalDefinition.objects.filter(enabled=True).select_related("latest").order_by("cell_id", "key")
    by_cell: dict[int, list[dict[str, Any]]] = {}
    for signal in signals:
        by_cell.setdefault(signal.cell_id, []).append(_signal_row(signal, now))
    rows = Alarm.objects.select_related("signal__cell", "signal__latest", "acknowledged_by")
    out_of_service = rows.filter(state=AlarmState.OUT_OF_SERVICE)
    alarms = [
        *rows.filter(state__in=SHOWN_ALARM_STATES).order_by("-raised_at")[:RECENT_ALARMS],
        *out_of_service.order_by("signal__cell__tag", "signal__key", "-raised_at")[:OUT_OF_SERVICE_SHOWN],
    ]
    suppressions = alarm_suppressions(alarms)
    newest = selectors.work_orders_qs().order_by("-created_at", "-pk")
    # Active orders first: a burst of closed ones never pushes an open order off the page.
    active = newest.filter(status__in=ACTIVE_STATUSES)
    work_orders = [*active[:RECENT_WORK_ORDERS], *newest.exclude(status__in=ACTIVE_STATUSES)[:RECENT_CLOSED]]
    return {
        "can_operate": can_operate,
        "cells": [
            {
                "id": c.pk,
                "tag": c.tag,
                "name": c.name,
                "onboarded": c.onboarding_complete,
                "signals": by_cell.get(c.pk, []),
            }
            for c in cells
            if by_cell.get(c.pk)
        ],
        "alarms": [_alarm_row(a, now, suppressions.get(a.pk)) for a in alarms],
        "work_orders": [selectors.work_order_as_dict(wo, full=True) for wo in work_orders],
        "active_work_orders": active.count(),
        "out_of_service_alarms": out_of_service.count(),
    }


@login_required
@require_GET
def control_room(request: HttpRequest) -> HttpResponse:
    latest = Event.objects.order_by("-id").values_list("id", flat=True).first() or 0
    watcher = can_watch(request.user)
    snapshot = _snapshot_for(request.user) if watcher else EMPTY_SNAPSHOT
    operates = snapshot["can_operate"]
    context = {
        "can_watch": watcher,
        "snapshot": snapshot,
        # The "New work order" form's cell picker (operators only: raising an order is theirs).
        "order_cells": list(Cell.objects.order_by("tag").values("id", "tag", "name")) if operates else [],
        "priorities": Priority.choices,
        "default_priority": Priority.MEDIUM,
        "api_paths": API_PATHS,
        "latest_event_id": latest,
        "replay_after": max(latest - RECENT_EVENTS, 0),
    }
    return render(request, "workorders/control_room.html", context)


@login_required
@require_GET
def control_room_state(request: HttpRequest) -> JsonResponse:
    if not can_watch(request.user):
        return JsonResponse({"detail": "Requires scope operator or approver.", "code": "forbidden"}, status=403)
    return JsonResponse(_snapshot_for(request.user))


def _snapshot_for(user: Any) -> dict[str, Any]:
    return control_room_snapshot(can_operate=has_scopes(user, (OPERATOR,)))
