"""One step of a plan under /api/v1/aria/plans/{plan_id}/steps/{order}: stop it or skip it.

Owner-scoped like the plan routes (another owner's plan is a 404); the service checks the step's
state (409 naming what it is) and writes the audit record and the `plan_updated` event.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema
from pydantic import ConfigDict, Field, ValidationError

from core.access import OPERATOR, require_scopes
from core.errors import InvalidInput, InvalidJson, NotFound
from orchestrator.models import PlanStep
from orchestrator.schemas import plans_out
from orchestrator.selectors import plan_get
from orchestrator.services.step_moves import step_skip, step_stop

router = Router(tags=["orchestrator"])


class StepMoveIn(Schema):
    model_config = ConfigDict(extra="forbid")  # a misspelt field is a 422, not a silent no-op
    reason: str = Field(default="", max_length=500)


def _reason(request: HttpRequest) -> str:
    """The optional body {"reason": str}: none at all (a bare POST, as a button sends) is no reason."""
    if not request.body.strip():
        return ""
    try:
        data = json.loads(request.body)
    except ValueError:
        raise InvalidJson("The request body is not valid JSON.") from None
    try:
        return StepMoveIn.model_validate(data).reason.strip()
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "body"
        raise InvalidInput(f"{field}: {error['msg']}", field=field) from None


def _step(request: HttpRequest, plan_id: int, order: int) -> PlanStep:
    require_scopes(request.user, OPERATOR)
    plan = plan_get(request.user, plan_id)
    step = PlanStep.objects.filter(plan=plan, order=order).first()
    if step is None:
        raise NotFound(f"Plan {plan_id} has no step {order}.")
    return step


@router.post("/plans/{plan_id}/steps/{order}/stop")
def stop_step(request: HttpRequest, plan_id: int, order: int) -> dict[str, Any]:
    """Stop a running or waiting step (body optional: {"reason": str})."""
    step = _step(request, plan_id, order)
    step_stop(step=step, actor=request.user, reason=_reason(request))
    return plans_out([plan_get(request.user, plan_id)], request.user)[0]


@router.post("/plans/{plan_id}/steps/{order}/skip")
def skip_step(request: HttpRequest, plan_id: int, order: int) -> dict[str, Any]:
    """Skip a pending step, or one waiting for a permission (body optional: {"reason": str})."""
    step = _step(request, plan_id, order)
    step_skip(step=step, actor=request.user, reason=_reason(request))
    return plans_out([plan_get(request.user, plan_id)], request.user)[0]
