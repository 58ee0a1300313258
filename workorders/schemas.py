"""Request bodies of the workorders API."""

from typing import Any, Literal

from ninja import Schema
from pydantic import Field

StatusName = Literal["detected", "analyzed", "open", "in_progress", "on_hold", "completed", "cancelled"]


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
