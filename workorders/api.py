"""Work orders, failure history, equipment KB and KPIs over HTTP (mounted at /api/v1/workorders)."""

from typing import Any

from django.http import HttpRequest, JsonResponse
from ninja import Query, Router, Status

from core.access import APPROVER, OPERATOR, require_any_scope, require_scopes
from core.idempotency import IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_MAX, idempotency_key_check, replayed_response
from core.json_types import TEXT_END, RowId
from core.models import AgentRun
from core.request_limits import MAX_PAGE_OFFSET
from sentinel.models import Cell
from workorders import kpis, selectors
from workorders.choices import allowed_transitions
from workorders.models import FailureHistory, WorkOrder
from workorders.schemas import KbPatchIn, PriorityName, StatusName, TransitionIn, WorkOrderRaiseIn
from workorders.services import equipment_kb_update, work_order_raise, work_order_transition

router = Router(tags=["workorders"])
PREFIX = "/workorders"
router.add_router("/shift", "workorders.api_logbook.router")  # /shift/logbook…, /shift/handovers…
router.add_router("", "workorders.api_execution.router")  # /{id}/assign|start|hold|cancel|complete, /execution/…
router.add_router("/evaluation", "workorders.api_evaluation.router")  # /evaluation/rca-runs[/{id}] (eval_rca)


def _detail(wo: WorkOrder) -> dict[str, Any]:
    data = selectors.work_order_as_dict(wo, full=True)
    data["allowed_transitions"] = allowed_transitions(wo.status)
    data["events"] = [
        {
            "from_status": e.from_status,
            "to_status": e.to_status,
            "actor": e.actor.get_username() if e.actor else "system",
            "note": e.note,
            "time": e.created_at.isoformat(),
        }
        for e in wo.events.select_related("actor")
    ]
    data["failures"] = [selectors.failure_as_dict(f) for f in wo.failures.all()]
    runs = AgentRun.objects.filter(subject_type="work_order", subject_id=str(wo.pk)).order_by("id")
    data["agent_runs"] = [
        {
            "id": r.pk,
            "agent": r.agent,
            "status": r.status,
            "finish_reason": r.finish_reason,
            "turn_id": r.turn_id,
            "tool_calls": r.tool_calls,
            "turns": r.turns,
            "duration_ms": r.duration_ms,
            "started_at": r.started_at.isoformat(),
        }
        for r in runs
    ]
    return data


@router.get("/failures")
def list_failures(
    request: HttpRequest,
    cell_id: RowId | None = None,
    failure_mode: str | None = None,
    limit: int = Query(50, ge=1, le=500),
) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)
    qs = FailureHistory.objects.order_by("-failure_time")
    if cell_id is not None:
        qs = qs.filter(cell_id=cell_id)
    if failure_mode:
        qs = qs.filter(failure_mode=failure_mode)
    items = [selectors.failure_as_dict(f) for f in qs[:limit]]
    return {"count": len(items), "items": items}


@router.get("/kb/{cell_id}")
def get_kb(request: HttpRequest, cell_id: int) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)
    cell = selectors.get_cell(cell_id)
    kb = selectors.equipment_kb(cell)
    return {
        "cell_id": cell.pk,
        "cell_tag": cell.tag,
        "data": kb.data if kb else {},
        "calibration_log": kb.calibration_log if kb else [],
        "updated_at": kb.updated_at.isoformat() if kb else None,
    }


@router.patch("/kb/{cell_id}")
def patch_kb(request: HttpRequest, cell_id: int, payload: KbPatchIn) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)
    cell = selectors.get_cell(cell_id)
    equipment_kb_update(
        cell=cell,
        patch=payload.patch,
        actor=request.user,
        note=payload.note,
        check_version="if_updated_at" in payload.model_fields_set,
        if_updated_at=payload.if_updated_at,
    )
    return get_kb(request, cell_id)


@router.get("/kpis")
def get_kpis(
    request: HttpRequest, cell_id: RowId | None = None, days: int = Query(90, ge=1, le=3650)
) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)
    cells = [selectors.get_cell(cell_id)] if cell_id is not None else list(Cell.objects.order_by("tag"))
    items = [
        {
            "cell_id": cell.pk,
            "cell_tag": cell.tag,
            "oee": kpis.oee(cell, days=min(days, 365)),
            "mtbf": kpis.mtbf(cell, days=days),
            "mttr": kpis.mttr(cell, days=days),
        }
        for cell in cells
    ]
    return {"days": days, "items": items}


@router.get("")
def list_work_orders(
    request: HttpRequest,
    status: StatusName | None = None,
    cell_id: RowId | None = None,
    cell: str | None = Query(None, description="Cell tag, e.g. P-02."),
    priority: PriorityName | None = None,
    limit: int = Query(50, ge=1, le=200),
    offset: int = Query(0, ge=0, le=MAX_PAGE_OFFSET),
) -> dict[str, Any]:
    require_any_scope(request.user, OPERATOR, APPROVER)  # approvers watch the Control Room
    qs = selectors.work_orders_qs()
    if status:
        qs = qs.filter(status=status)
    if cell_id is not None:
        qs = qs.filter(cell_id=cell_id)
    if cell:
        qs = qs.filter(cell__tag=cell)
    if priority:
        qs = qs.filter(priority=priority)
    items = [selectors.work_order_as_dict(wo) for wo in qs[offset : offset + limit]]
    return {"count": qs.count(), "items": items}


_IDEMPOTENCY_HEADER = {
    "parameters": [
        {
            "name": "Idempotency-Key",
            "in": "header",
            "required": False,
            "description": "Raise at most one order per key: a retry with the same values answers the "
            "order already raised (header `Idempotent-Replayed: true`); other values are a 409.",
            # Visible ASCII (spaces inside), as core.idempotency.idempotency_key_check reads it.
            "schema": {"type": "string", "maxLength": IDEMPOTENCY_KEY_MAX, "pattern": "^ *[!-~][ -~]*" + TEXT_END},
        }
    ]
}


@router.post("", response={201: dict}, openapi_extra=_IDEMPOTENCY_HEADER)
def raise_work_order(request: HttpRequest, payload: WorkOrderRaiseIn) -> Status | JsonResponse:
    """Raise a work order by hand (a problem found in the field): it starts `open`, records who
    raised it, and is assigned, started and completed like any other. Operators only."""
    require_scopes(request.user, OPERATOR)
    key = idempotency_key_check(request.headers.get(IDEMPOTENCY_HEADER))
    wo, replayed = work_order_raise(
        cell=payload.cell,
        title=payload.title,
        description=payload.description,
        priority=payload.priority,
        actor=request.user,
        idempotency_key=key,
    )
    data = _detail(selectors.get_work_order(wo.pk))
    if replayed:
        return replayed_response(data, status=201)
    return Status(201, data)


@router.get("/{work_order_id}")
def get_work_order(request: HttpRequest, work_order_id: int) -> dict[str, Any]:
    require_any_scope(request.user, OPERATOR, APPROVER)  # approvers watch the Control Room
    return _detail(selectors.get_work_order(work_order_id))


@router.post("/{work_order_id}/transition")
def transition_work_order(request: HttpRequest, work_order_id: int, payload: TransitionIn) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)
    wo = selectors.get_work_order(work_order_id)
    work_order_transition(
        work_order=wo,
        to_status=payload.to_status,
        actor=request.user,
        note=payload.note,
        rca_summary=payload.rca_summary,
        confidence=payload.confidence,
    )
    return _detail(selectors.get_work_order(work_order_id))
