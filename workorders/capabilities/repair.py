"""Plans ask for a work order's repair order: the Generator's output, waited on as a job."""

from typing import Any

from pydantic import BaseModel

from core.access import OPERATOR
from core.capabilities import CapabilityContext, JobHandle, JobStatus, Tier, capability, job_resolver
from workorders import selectors
from workorders.choices import WorkOrderStatus
from workorders.dispatch import generation_dispatch
from workorders.models import WorkOrder

S = WorkOrderStatus
REPAIRED = (S.OPEN, S.IN_PROGRESS, S.ON_HOLD, S.COMPLETED)


class RepairOrderInput(BaseModel):
    work_order_id: int


@capability(
    "workorders.generate_repair_order",
    description=(
        "Have the Generator write the repair order of an analyzed work order (actions, parts, skills, window); "
        "returns a job that is done once the order is open. Investigate a detected order first."
    ),
    input=RepairOrderInput,
    tier=Tier.SAFE,
    scopes=(OPERATOR,),
    returns_job=True,
)
def generate_repair_order(ctx: CapabilityContext, params: RepairOrderInput) -> JobHandle:
    wo = selectors.get_work_order(params.work_order_id)
    if wo.status == S.ANALYZED and not (wo.rca_details or {}).get("fallback"):
        # The lifecycle already queued one on analysis; a keyed intent per plan attempt re-drives a lost one.
        generation_dispatch(wo.pk, reason=str(ctx.extra.get("idempotency_key") or ""))
    return JobHandle("repair_order", str(wo.pk))


@job_resolver("repair_order")
def repair_order_status(ref: str) -> JobStatus:
    wo = WorkOrder.objects.filter(pk=int(ref)).first()
    if wo is None:
        return "failed", {"error": f"Work order {ref} not found."}
    details: dict[str, Any] = {"work_order_id": wo.pk, "status": wo.status, "title": wo.title}
    if wo.status in REPAIRED:
        return "done", {
            **details,
            "priority": wo.priority,
            "recommended_actions": wo.recommended_actions,
            "required_parts": wo.required_parts,
            "estimated_duration_min": wo.estimated_duration_min,
        }
    if wo.status == S.CANCELLED:
        return "failed", {**details, "error": "the work order was cancelled"}
    if wo.status == S.ANALYZED and (wo.rca_details or {}).get("fallback"):
        return "failed", {**details, "error": "the investigation found no root cause; a person writes the repair order"}
    return "pending", details
