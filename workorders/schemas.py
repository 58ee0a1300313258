"""Request bodies of the workorders API."""

from datetime import datetime
from typing import Any, Literal

from ninja import Schema
from pydantic import Field, field_validator

from core.json_types import BodyRowId, not_blank_text

StatusName = Literal["detected", "analyzed", "open", "in_progress", "on_hold", "completed", "cancelled"]
PriorityName = Literal["low", "medium", "high", "critical"]


class TransitionIn(Schema):
    to_status: StatusName
    note: str = Field(default="", max_length=500)
    rca_summary: str | None = Field(
        default=None,
        max_length=4000,
        description="Required with to_status=analyzed: the root cause found; the Generator then writes the order.",
    )
    confidence: float | None = Field(default=None, ge=0.0, le=1.0, description="Of a manual RCA; default 1.0.")


class KbPatchIn(Schema):
    patch: dict[str, Any]
    note: str = Field(default="", max_length=500)
    if_updated_at: datetime | None = Field(
        default=None,
        description=(
            "Optional precondition: the `updated_at` the writer read (null: the cell had no KB yet). "
            "If the KB has changed since, 409 kb_changed and nothing is written. Left out: no check."
        ),
    )

    @field_validator("if_updated_at", mode="before")
    @classmethod
    def _a_time_as_read(cls, value: Any) -> Any:
        # An ISO time as GET answered it, or null; not a number pydantic would read as epoch seconds.
        if value is not None and not isinstance(value, str):
            raise ValueError("give the updated_at the KB was read at (an ISO 8601 time), or null")
        return value


class WorkOrderRaiseIn(Schema):
    """A work order raised by hand (workorders.services.manual_intake.work_order_raise)."""

    cell: BodyRowId = Field(description="The id of the cell (equipment) the problem was found on.")
    title: str = not_blank_text(200, description="What was found, e.g. 'Seal leak at P-02'.")
    description: str = Field(default="", max_length=5000)
    priority: PriorityName = "medium"
