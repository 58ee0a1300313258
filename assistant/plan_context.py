"""Context refs for plan mode: work orders and equipment the goal names, resolved through the
read capabilities (`[{"type": "work_order", "id": 7}, {"type": "cell", "id": 2}]`)."""

from __future__ import annotations

import re
from typing import Any

from assistant.tool_args import args_for
from core.capabilities import CapabilityContext, dispatch

WORK_ORDER = re.compile(r"\b(?:work[ -]?order|WO)[ #:-]*(\d+)\b", re.IGNORECASE)
TAG = re.compile(r"\b([A-Z]{1,4}-\d{1,4}[A-Z]?)\b")


def _cell_for_tag(tag: str, ctx: CapabilityContext) -> int | None:
    result = dispatch("get_work_orders", args_for("get_work_orders", {"limit": 100}), ctx=ctx)
    rows = result.content.get("work_orders", []) if isinstance(result.content, dict) else []
    for row in rows:
        if isinstance(row, dict) and str(row.get("cell_tag", "")).upper() == tag.upper():
            return row.get("cell_id")
    return None


def context_refs_for(goal: str, ctx: CapabilityContext) -> list[dict[str, Any]]:
    refs: list[dict[str, Any]] = []
    for match in WORK_ORDER.finditer(goal):
        refs.append({"type": "work_order", "id": int(match.group(1))})
    for tag in dict.fromkeys(TAG.findall(goal)):
        if tag.upper().startswith("WO-"):
            continue
        cell_id = _cell_for_tag(tag, ctx)
        if isinstance(cell_id, int):
            refs.append({"type": "cell", "id": cell_id})
    return refs
