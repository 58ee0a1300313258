"""Stored RCA evaluations (`manage.py eval_rca`) over HTTP, for charting diagnosis quality:
/api/v1/workorders/evaluation/rca-runs[/{id}] (two segments, so `/{work_order_id}` never takes them)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Schema
from pydantic import Field

from core.access import APPROVER, OPERATOR, require_any_scope
from core.errors import NotFound
from workorders.evaluation import evaluation_as_dict
from workorders.models import RcaEvaluation

router = Router(tags=["workorders"])


class RcaRunsQuery(Schema):
    held_out: bool | None = Field(default=None, description="Only the held-out (true) or main (false) set.")
    engine: str | None = Field(default=None, max_length=32)
    limit: int = Field(default=50, ge=1, le=200)


@router.get("/rca-runs")
def list_rca_runs(request: HttpRequest, filters: Query[RcaRunsQuery]) -> dict[str, Any]:
    """Newest first: engine, set, scores and confusion matrix of each run (no per-case rows)."""
    require_any_scope(request.user, OPERATOR, APPROVER)
    qs = RcaEvaluation.objects.all()
    if filters.held_out is not None:
        qs = qs.filter(held_out=filters.held_out)
    if filters.engine:
        qs = qs.filter(engine=filters.engine)
    return {"runs": [evaluation_as_dict(e) for e in qs[: filters.limit]]}


@router.get("/rca-runs/{run_id}")
def get_rca_run(request: HttpRequest, run_id: int) -> dict[str, Any]:
    """One run with every case: truth, prediction, evidence cited, similar failure named."""
    require_any_scope(request.user, OPERATOR, APPROVER)
    evaluation = RcaEvaluation.objects.filter(pk=run_id).first()
    if evaluation is None:
        raise NotFound(f"No RCA evaluation {run_id}.", field="run_id")
    return evaluation_as_dict(evaluation, with_results=True)
