"""Capabilities that start or run the maintenance agents."""

from typing import Any

from pydantic import BaseModel, Field

from core.access import OPERATOR
from core.capabilities import CapabilityContext, JobHandle, JobStatus, Tier, capability, job_resolver
from workorders import selectors
from workorders.agents.kb import answer_kb_question as answer
from workorders.agents.kb import run_kb_builder
from workorders.choices import WorkOrderStatus
from workorders.dispatch import investigation_dispatch
from workorders.models import WorkOrder

S = WorkOrderStatus


class StartInvestigationInput(BaseModel):
    work_order_id: int


class AskKbInput(BaseModel):
    cell_id: int
    question: str = Field(min_length=1, max_length=1000)


@capability(
    "workorders.start_investigation",
    description="Queue the Investigator for a detected work order; returns a job that is done once it is analyzed.",
    input=StartInvestigationInput,
    tier=Tier.SAFE,
    scopes=(OPERATOR,),
    returns_job=True,
)
def start_investigation(ctx: CapabilityContext, params: StartInvestigationInput) -> JobHandle:
    wo = selectors.get_work_order(params.work_order_id)
    if wo.status == S.DETECTED:
        investigation_dispatch(wo.pk)
    return JobHandle("investigation", str(wo.pk))


@job_resolver("investigation")
def investigation_status(ref: str) -> JobStatus:
    wo = WorkOrder.objects.filter(pk=int(ref)).first()
    if wo is None:
        return "failed", {"error": f"Work order {ref} not found."}
    if wo.status == S.DETECTED:
        return "pending", {"work_order_id": wo.pk, "status": wo.status}
    if wo.status == S.CANCELLED and not wo.rca_summary:
        return "failed", {"work_order_id": wo.pk, "status": wo.status, "error": "cancelled before analysis"}
    return "done", {
        "work_order_id": wo.pk,
        "status": wo.status,
        "rca_summary": wo.rca_summary,
        "confidence": wo.confidence,
    }


@capability(
    "workorders.ask_kb_builder",
    description="Hand a question about a cell's equipment knowledge to the KB agent; returns {answer, source, confidence}.",
    input=AskKbInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
    handoff_to="kb_builder",
)
def ask_kb_builder(ctx: CapabilityContext, params: AskKbInput) -> dict[str, Any]:
    return run_kb_builder(cell_id=params.cell_id, question=params.question, ctx=ctx)


@capability(
    "workorders.answer_kb_question",
    description="Answer a question about a cell's equipment from its KB: {answer, source, confidence}. No side effects.",
    input=AskKbInput,
    tier=Tier.READ,
    scopes=(OPERATOR,),
)
def answer_kb_question(ctx: CapabilityContext, params: AskKbInput) -> dict[str, Any]:
    selectors.get_cell(params.cell_id)
    return answer(params.cell_id, params.question)
