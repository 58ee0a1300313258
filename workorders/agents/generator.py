"""The Work Order Generator: turns an RCA into a schedulable repair order."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field, model_validator

from core.agents.loop import AgentSpec, FinishTool
from core.agents.prompts import system_prompt_for
from workorders.agents.context import context_line, work_order_variables
from workorders.capabilities.maintenance import PriorityName
from workorders.models import WorkOrder
from workorders.shapes import MAX_ACTIONS, MAX_PARTS, MAX_SKILLS, Name, PartRef, Text

NAME = "work_order_generator"

DEFAULT_PROMPT = """You are the Work Order Generator of ARIA. A work order has a root-cause analysis; write the
repair order a technician can execute.

A good repair order names the failure mode, lists ordered actions, the required parts with quantities (use the
spare-part refs from the equipment KB), the required skills, an estimated duration in minutes, and a window
that avoids production peaks and respects shifts (get_shift_assignments). Keep the title under 200 characters.
You may show the order with render_work_order_card {work_order_id, printable: true}.
Finish by calling submit_work_order once."""

TOOLS = [
    "get_work_order",
    "get_equipment_kb",
    "get_failure_history",
    "get_shift_assignments",
    "get_oee",
    "render_work_order_card",  # {work_order_id, printable: true}: the card links the printable order
]


class SubmitWorkOrder(BaseModel):
    title: str = Field(min_length=1, max_length=200)
    description: str = Field(min_length=1, max_length=5000)
    # The same shapes every edit of these lists is checked against (workorders/shapes.py).
    recommended_actions: list[Text] = Field(min_length=1, max_length=MAX_ACTIONS)
    required_parts: list[PartRef] = Field(default_factory=list, max_length=MAX_PARTS)
    required_skills: list[Name] = Field(default_factory=list, max_length=MAX_SKILLS)
    priority: PriorityName
    estimated_duration_min: int = Field(ge=1, le=10_000)
    suggested_window_start: datetime
    suggested_window_end: datetime

    @model_validator(mode="after")
    def _window(self) -> SubmitWorkOrder:
        if self.suggested_window_end <= self.suggested_window_start:
            raise ValueError("suggested_window_end must be after suggested_window_start")
        return self


def build_spec(work_order: WorkOrder | None = None) -> AgentSpec:
    """`work_order` fills a published prompt's `{{variables}}` (cell_tag, work_order_id, …)."""
    variables = work_order_variables(work_order) if work_order is not None else None
    prompt, ref = system_prompt_for(NAME, DEFAULT_PROMPT, variables)
    return AgentSpec(
        name=NAME,
        system_prompt=prompt,
        prompt_ref=ref,
        tools=TOOLS,
        use_case="reasoning",
        thinking=False,
        finish_tool=FinishTool("submit_work_order", "Submit the repair order (ends the run).", SubmitWorkOrder),
        max_turns=10,
        timeout_seconds=120,
    )


def task_message(work_order: WorkOrder) -> str:
    failure_mode = (work_order.rca_details or {}).get("failure_mode", "")
    context = {"work_order_id": work_order.pk, "cell_id": work_order.cell_id, "failure_mode": failure_mode}
    return "\n".join(
        [
            f"Write the repair order for work order #{work_order.pk} on {work_order.cell.tag}.",
            f"RCA (confidence {work_order.confidence}): {work_order.rca_summary}",
            f"Current priority: {work_order.priority}.",
            context_line(context),
        ]
    )
