"""Sentinel API: plant, signals (ingest, latest, trends) and alarms. Every route needs `operator`
(ingest also accepts a system service token). Mounted at /api/v1 with full paths below."""

from __future__ import annotations

import json
from typing import Any, TypedDict, cast

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django_stubs_ext import WithAnnotations
from ninja import Query, Router, Schema
from pydantic import Field

from core.access import APPROVER, OPERATOR, has_scopes, is_service_account, require_any_scope, require_scopes
from core.errors import InvalidInput, InvalidJson, NotAuthenticated
from core.idempotency import IDEMPOTENCY_HEADER, idempotency_key_check, replayed_response
from core.json_types import RowId
from core.request_limits import MAX_PAGE_OFFSET
from sentinel import selectors
from sentinel.choices import AlarmState, Severity
from sentinel.models import Cell
from sentinel.schemas import (
    AlarmDetailOut,
    AlarmOut,
    CellOut,
    CommentIn,
    IngestOut,
    ReasonIn,
    ShelveIn,
    SignalOut,
    alarm_event_out,
    alarm_out,
    signal_out,
)
from sentinel.services import (
    alarm_acknowledge,
    alarm_put_out_of_service,
    alarm_return_to_service,
    alarm_shelve,
    alarm_unshelve,
    samples_ingest,
)
from sentinel.services.ingest import MAX_SAMPLES, samples_decode, samples_ingest_once

PREFIX = "/"
router = Router(tags=["sentinel"])

_INGEST_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["samples"],
                    "properties": {
                        "samples": {
                            "type": "array",
                            "maxItems": MAX_SAMPLES,
                            "items": {
                                "type": "object",
                                "required": ["signal_id", "time", "value"],
                                "properties": {
                                    "signal_id": {"type": "integer"},
                                    "time": {"type": "string", "format": "date-time"},
                                    "value": {"type": "number"},
                                },
                            },
                        }
                    },
                }
            }
        },
    }
}


def _require_operator(request: HttpRequest) -> None:
    require_scopes(request.user, OPERATOR)


def _require_watcher(request: HttpRequest) -> None:
    """Reads the Control Room draws (trends, alarms): operators, and approvers watching it.
    Every alarm action stays operator-only."""
    require_any_scope(request.user, OPERATOR, APPROVER)


def _require_ingest(request: HttpRequest) -> User:
    """Operators, or a system service account (a plant gateway's token). Returns the caller."""
    user = request.user
    if has_scopes(user, [OPERATOR]):
        return _signed_in(request)
    if isinstance(user, User) and is_service_account(user) and user.service_account.role == "system":
        return user
    require_scopes(user, OPERATOR)
    return _signed_in(request)


def _signed_in(request: HttpRequest) -> User:
    """The caller, once a scope check has let it in (those refuse anonymous callers first)."""
    user = request.user
    if isinstance(user, AnonymousUser):
        raise NotAuthenticated("Authentication required.")
    return user


@router.post("/signals/samples", response=IngestOut, openapi_extra=_INGEST_BODY)
def ingest_samples(request: HttpRequest) -> dict[str, Any] | HttpResponse:
    """Up to 10,000 samples; all or nothing. A well-formed body is decoded in one pass
    (`samples_decode`); any other goes through the checking parser, so a bad item is named
    exactly (`samples[3].value: must be finite`) and 10k items cost no per-item model validation.
    With an `Idempotency-Key` header, a retried batch is stored once and answered with the
    first response (header `Idempotent-Replayed: true`)."""
    user = _require_ingest(request)
    key = idempotency_key_check(request.headers.get(IDEMPOTENCY_HEADER))
    samples: list[Any] | None = samples_decode(request.body)
    if samples is None:
        samples = _samples_checked(request.body)
    if key is None:
        return _ingest_response(samples, user)
    response, replayed = samples_ingest_once(
        key=key, actor=user, body=request.body, ingest=lambda: _ingest_response(samples, user)
    )
    if replayed:
        return replayed_response(response)
    return response


def _samples_checked(raw: bytes) -> list[Any]:
    """The body's `samples` list, or the 4xx naming what is wrong with the body (its items are
    checked by `samples_validate` in the service)."""
    try:
        body = json.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError):
        raise InvalidJson("The request body is not valid JSON.") from None
    if not isinstance(body, dict) or "samples" not in body:
        raise InvalidInput("samples: is required", field="samples")
    if not isinstance(body["samples"], list):
        raise InvalidInput("samples: must be a list", field="samples")
    return body["samples"]


def _ingest_response(samples: list[Any], user: User) -> dict[str, Any]:
    result = samples_ingest(samples=samples, actor=user)
    return {
        "accepted": result.accepted,
        "signals": result.signals,
        "raised": result.evaluation.raised,
        "escalated": result.evaluation.escalated,
        "cleared": result.evaluation.cleared,
        # Stored as history but older than the signal's latest sample, so never evaluated.
        "out_of_order": {"count": result.out_of_order.count, "indices": result.out_of_order.indices},
        # Samples whose (signal, time) was already stored: counted, not stored again.
        "duplicates": result.duplicates,
    }


class _AlarmCounts(TypedDict):
    active_alarm_count: int
    open_alarm_count: int


@router.get("/cells", response=list[CellOut])
def list_cells(request: HttpRequest) -> list[dict[str, Any]]:
    _require_operator(request)
    return [
        {
            "id": cell.pk,
            "tag": cell.tag,
            "name": cell.name,
            "equipment_type": cell.equipment_type,
            "line": cell.line.name,
            "site": cell.line.site.name,
            "onboarding_complete": cell.onboarding_complete,
            "active_alarm_count": cell.active_alarm_count,
            "open_alarm_count": cell.open_alarm_count,
            "signals": [signal_out(s) for s in cell.signals.all()],
        }
        for cell in cast("QuerySet[WithAnnotations[Cell, _AlarmCounts]]", selectors.cells_with_signals())
    ]


@router.get("/signals/latest", response=list[SignalOut])
def latest_values(request: HttpRequest, cell_id: RowId | None = None) -> list[dict[str, Any]]:
    _require_operator(request)
    return [signal_out(latest.signal, latest) for latest in selectors.signals_latest(cell_id=cell_id)]


class TrendQuery(Schema):
    minutes: int = Field(60, ge=1, le=selectors.MAX_TREND_MINUTES)
    buckets: int = Field(60, ge=1, le=selectors.MAX_TREND_BUCKETS)


@router.get("/signals/{signal_id}/trends")
def signal_trends(request: HttpRequest, signal_id: int, params: Query[TrendQuery]) -> dict[str, Any]:
    """Bucketed min/avg/max over the last `minutes`, for a chart."""
    _require_watcher(request)
    return selectors.signal_trends(
        signal=selectors.signal_get(signal_id), minutes=params.minutes, buckets=params.buckets
    )


_STATE = f"(?:{'|'.join(AlarmState.values)})"


class AlarmFilter(Schema):
    # Documented as a pattern/enum; the selector checks them and names the allowed values on a 422.
    state: str | None = Field(
        None,
        description="A state, a comma list, or `open`.",
        json_schema_extra={"pattern": f"^(?:open|(?: *{_STATE}? *)(?:, *{_STATE}? *)*)$"},
    )
    cell_id: RowId | None = None
    cell: str | None = Field(None, description="Cell tag, e.g. P-02 (alternative to cell_id).")
    severity: str | None = Field(None, json_schema_extra={"enum": list(Severity.values)})
    limit: int = Field(100, ge=1, le=500)
    offset: int = Field(0, ge=0, le=MAX_PAGE_OFFSET, description="Alarms to skip (newest first), to page back.")


@router.get("/alarms", response=list[AlarmOut])
def list_alarms(request: HttpRequest, filters: Query[AlarmFilter]) -> list[dict[str, Any]]:
    _require_watcher(request)
    alarms = selectors.alarms_list(
        state=filters.state, cell_id=filters.cell_id, cell_tag=filters.cell, severity=filters.severity
    )
    return [alarm_out(a) for a in alarms[filters.offset : filters.offset + filters.limit]]


# An alarm's events grow with every shelve/unshelve and acknowledge cycle: the detail (also the answer
# of every alarm action) carries the newest ones, oldest first, and how many there are in all.
MAX_DETAIL_EVENTS = 200


def _detail(alarm_id: int) -> dict[str, Any]:
    alarm = selectors.alarm_get(alarm_id)
    newest = list(alarm.events.select_related("actor").order_by("-id")[:MAX_DETAIL_EVENTS])
    total = len(newest) if len(newest) < MAX_DETAIL_EVENTS else alarm.events.count()
    return {**alarm_out(alarm), "events": [alarm_event_out(e) for e in reversed(newest)], "events_total": total}


@router.get("/alarms/{alarm_id}", response=AlarmDetailOut)
def get_alarm(request: HttpRequest, alarm_id: int) -> dict[str, Any]:
    _require_watcher(request)
    return _detail(alarm_id)


@router.post("/alarms/{alarm_id}/acknowledge", response=AlarmDetailOut)
def acknowledge(request: HttpRequest, alarm_id: int, payload: CommentIn | None = None) -> dict[str, Any]:
    _require_operator(request)
    alarm = selectors.alarm_get(alarm_id)
    alarm_acknowledge(alarm=alarm, actor=_signed_in(request), comment=payload.comment if payload else "")
    return _detail(alarm_id)


@router.post("/alarms/{alarm_id}/shelve", response=AlarmDetailOut)
def shelve(request: HttpRequest, alarm_id: int, payload: ShelveIn) -> dict[str, Any]:
    _require_operator(request)
    alarm = selectors.alarm_get(alarm_id)
    alarm_shelve(
        alarm=alarm,
        actor=_signed_in(request),
        minutes=payload.minutes,
        until_work_order_closes=payload.until_work_order_closes,
        comment=payload.comment,
    )
    return _detail(alarm_id)


@router.post("/alarms/{alarm_id}/unshelve", response=AlarmDetailOut)
def unshelve(request: HttpRequest, alarm_id: int, payload: CommentIn | None = None) -> dict[str, Any]:
    _require_operator(request)
    alarm_unshelve(
        alarm=selectors.alarm_get(alarm_id), actor=_signed_in(request), comment=payload.comment if payload else ""
    )
    return _detail(alarm_id)


@router.post("/alarms/{alarm_id}/out-of-service", response=AlarmDetailOut)
def out_of_service(request: HttpRequest, alarm_id: int, payload: ReasonIn) -> dict[str, Any]:
    """Out of service with a reason (`comment`, required, not blank): a 422 naming `comment` otherwise."""
    _require_operator(request)
    alarm = selectors.alarm_get(alarm_id)
    alarm_put_out_of_service(alarm=alarm, actor=_signed_in(request), comment=payload.comment)
    return _detail(alarm_id)


@router.post("/alarms/{alarm_id}/return-to-service", response=AlarmDetailOut)
def return_to_service(request: HttpRequest, alarm_id: int, payload: CommentIn | None = None) -> dict[str, Any]:
    _require_operator(request)
    alarm = selectors.alarm_get(alarm_id)
    alarm_return_to_service(alarm=alarm, actor=_signed_in(request), comment=payload.comment if payload else "")
    return _detail(alarm_id)


router.add_router("", "sentinel.api_performance.router")  # GET /alarm-performance (ISA-18.2 alarm performance)
