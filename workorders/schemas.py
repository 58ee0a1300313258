"""Request bodies of the workorders API."""

from typing import Any, Literal

from ninja import Schema
from pydantic import Field

StatusName = Literal["detected", "analyzed", "open", "in_progress", "completed", "cancelled"]


class TransitionIn(Schema):
    to_status: StatusName
    note: str = Field(default="", max_length=500)


class KbPatchIn(Schema):
    patch: dict[str, Any]
    note: str = Field(default="", max_length=500)
